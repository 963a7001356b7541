#!/usr/bin/env bash
# Runs the official @upstash/redis SDK's own search tests (upstash/redis-js packages/redis/pkg/commands/search/
# *.test.ts, written for `bun test`) unchanged against the local platform, with vitest: `bun:test` is mapped to
# a small shim that re-exports vitest. Then the adapters' tests (packages/search-ioredis and search-redis: the
# SDK's search API over ioredis and node-redis) against the proxy of the same dev stack. Prints vitest's summaries.
#
#   scripts/sdk-search-suite.sh /path/to/redis-js            # a checkout (work tree) of upstash/redis-js
#   REDIS_JS_GIT=/path/to/redis-js.git scripts/sdk-search-suite.sh   # or a bare git directory (HEAD is used)
#   scripts/sdk-search-suite.sh /path/to/redis-js search.test.ts     # only some of the files
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
log() { printf 'sdk-search-suite: %s\n' "$*" >&2; }

work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

src=${1:-}
if [ -n "${REDIS_JS_GIT:-}" ]; then
  git --git-dir="$REDIS_JS_GIT" archive HEAD packages/redis packages/search-ioredis packages/search-redis | tar -x -C "$work" || { log "cannot read $REDIS_JS_GIT"; exit 1; }
elif [ -n "$src" ] && [ -d "$src/packages/redis/pkg" ]; then
  mkdir -p "$work/packages" && cp -r "$src/packages/redis" "$src/packages/search-ioredis" "$src/packages/search-redis" "$work/packages/"
else
  log "give a redis-js checkout as the first argument, or REDIS_JS_GIT=<git dir>"
  exit 1
fi
shift || true
pkg=$work/packages/redis
files=("$@")
[ ${#files[@]} -eq 0 ] && files=(search.test.ts search-typesafety.test.ts command-builder.test.ts schema-builder.test.ts utils.test.ts)

cat >"$pkg/bun-test-shim.ts" <<'EOF'
export { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test, it } from 'vitest';
EOF
cat >"$pkg/vitest.config.mts" <<EOF
import { defineConfig } from 'vitest/config';
export default defineConfig({
  resolve: { alias: { 'bun:test': '$pkg/bun-test-shim.ts' } },
  test: { testTimeout: 20000, hookTimeout: 60000, maxWorkers: 1, fileParallelism: false },
});
EOF
# The package's tsconfig extends the monorepo's base, which is not copied: a plain one instead.
echo '{ "compilerOptions": { "target": "ES2022", "module": "ESNext", "moduleResolution": "bundler", "strict": true } }' >"$pkg/tsconfig.json"
# The SDK's sources import uncrypto and vitest: resolve them from this repository's node_modules.
ln -s "$root/node_modules" "$pkg/node_modules"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free_port)
proxy_port=$(free_port)
token=sdk-search-$RANDOM$RANDOM
"$root/bin/respgate" dev --ephemeral --http-port "$port" --port "$proxy_port" --vector-port "$(free_port)" --queue-port "$(free_port)" \
  --token "$token" --log-level warn >"$work/dev.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
  grep -q ready "$work/dev.log" 2>/dev/null && break
  sleep 0.1
done
grep -q ready "$work/dev.log" || { log "respgate dev did not start:"; cat "$work/dev.log" >&2; exit 1; }

paths=()
for f in "${files[@]}"; do paths+=("pkg/commands/search/$f"); done
(cd "$pkg" && UPSTASH_REDIS_REST_URL="http://127.0.0.1:$port" UPSTASH_REDIS_REST_TOKEN="$token" \
  "$root/node_modules/.bin/vitest" run --config vitest.config.mts "${paths[@]}")
rc=$?

# The adapters (ioredis, node-redis) drive the same search API through the proxy.
for adapter in "$work/packages/search-ioredis" "$work/packages/search-redis"; do
  [ -d "$adapter/test" ] || continue
  echo '{ "compilerOptions": { "target": "ES2022", "module": "ESNext", "moduleResolution": "bundler", "strict": true } }' >"$adapter/tsconfig.json"
  rm -f "$adapter/vitest.config.mts"
  ln -s "$root/node_modules" "$adapter/node_modules"
  (cd "$adapter" && REDIS_URL="redis://127.0.0.1:$proxy_port" "$root/node_modules/.bin/vitest" run --root . test) || rc=1
done
exit $rc
