#!/usr/bin/env bash
# Runs redis-py 4.3.4's and ioredis 5.11.1's own test suites against a direct redis-server 7.0.15 and
# through the proxy (`respgate dev --ephemeral`: proxy + local platform), one after the other, both on
# 127.0.0.1:6379 (ioredis' suite has that address built in), and prints each side's counts and the
# tests that fail only through the proxy (docs/redis-suite.md, "Clients' own test suites").
#
#   scripts/client-suites.sh                  # both suites (about 6 minutes on 2 quiet cores)
#   scripts/client-suites.sh ioredis          # one of them: redis-py or ioredis
#   RPY_TESTS=tests/test_monitor.py IORED_FILES=test/functional/scripting.ts scripts/client-suites.sh
#
# The suites live outside the repository: RPY_DIR (default /tmp/rpy) holds redis-py's tests/ from the
# v4.3.4 tag, run by /usr/bin/python3 with Debian's python3-redis 4.3.4 and python3-pytest; IORED_DIR
# (default /tmp/iored) the ioredis v5.11.1 tree with its dev dependencies. Missing ones are made from
# the GitHub mirrors in MIRRORS (default /work/.mirror) and, for ioredis, `npm install`.
# Results: OUT (default .tmp/client-suites), one file per suite and side, and *.only (proxy-only).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
log() { printf 'client-suites: %s\n' "$*" >&2; }

rpy=${RPY_DIR:-/tmp/rpy}
iored=${IORED_DIR:-/tmp/iored}
mirrors=${MIRRORS:-/work/.mirror}
out=${OUT:-$root/.tmp/client-suites}
suites=("$@")
[ ${#suites[@]} -eq 0 ] && suites=(redis-py ioredis)
mkdir -p "$out"

port_busy() { (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null; }
if port_busy; then
  log "something listens on 127.0.0.1:6379 already: stop it first (the suites need that port)"
  exit 1
fi

if [ ! -d "$rpy/tests" ]; then
  log "making $rpy from redis-py v4.3.4"
  mkdir -p "$rpy" && git --git-dir="$mirrors/redis+redis-py/repo" archive v4.3.4 tests tox.ini | tar -x -C "$rpy" || exit 1
fi
if [ ! -d "$iored/node_modules" ]; then
  log "making $iored from ioredis v5.11.1 (npm install of its dev dependencies)"
  mkdir -p "$iored" && git --git-dir="$mirrors/redis+ioredis/repo" archive v5.11.1 | tar -x -C "$iored" || exit 1
  (cd "$iored" && npm install --no-audit --no-fund >/dev/null) || exit 1
fi

# Module, cluster, sentinel and TLS tests need servers of their own: left out on both sides.
rpy_ignore=()
for f in test_cluster.py test_sentinel.py test_ssl.py test_bloom.py test_json.py test_search.py test_timeseries.py \
  test_graph.py test_graph_utils asyncio/test_cluster.py asyncio/test_sentinel.py asyncio/test_bloom.py \
  asyncio/test_json.py asyncio/test_search.py asyncio/test_timeseries.py; do
  rpy_ignore+=("--ignore=tests/${f/asyncio\//test_asyncio/}")
done

run_suites() { # side
  local side=$1
  for s in "${suites[@]}"; do
    case $s in
      redis-py)
        log "redis-py, $side"
        # shellcheck disable=SC2086
        (cd "$rpy" && /usr/bin/python3 -m pytest ${RPY_TESTS:-tests} "${rpy_ignore[@]}" --redis-url=redis://127.0.0.1:6379/0 \
          -q -p no:cacheprovider -rfE >"$out/redis-py.$side.txt" 2>&1)
        grep -E '^(FAILED|ERROR) ' "$out/redis-py.$side.txt" | sed 's/ - .*//' | sort >"$out/redis-py.$side.failed"
        tail -n 1 "$out/redis-py.$side.txt"
        ;;
      ioredis)
        log "ioredis, $side"
        # shellcheck disable=SC2086
        (cd "$iored" && TS_NODE_TRANSPILE_ONLY=true NODE_ENV=test npx mocha "test/helpers/*.ts" ${IORED_FILES:-"test/functional/**/*.ts"} \
          --timeout 60000 --reporter json --reporter-option "output=$out/ioredis.$side.json" >/dev/null 2>&1)
        node -e '
          const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
          require("fs").writeFileSync(process.argv[2], r.failures.map((f) => f.fullTitle).sort().join("\n") + (r.failures.length ? "\n" : ""));
          console.log(`${r.stats.passes} passing, ${r.stats.failures} failing, ${r.stats.pending} pending`);
        ' "$out/ioredis.$side.json" "$out/ioredis.$side.failed"
        ;;
      *) log "unknown suite $s (redis-py or ioredis)"; exit 1 ;;
    esac
  done
}

wait_ping() {
  for _ in $(seq 1 300); do
    [ "$(redis-cli -p 6379 ping 2>/dev/null)" = PONG ] && return 0
    sleep 0.1
  done
  log "nothing answers PING on 6379"
  return 1
}

stop() { # pid
  kill "$1" 2>/dev/null
  for _ in $(seq 1 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$1" 2>/dev/null
}

data=$(mktemp -d)
# DEBUG enabled as in redis-py's CI: its busy-loading tests make the server answer chosen errors with it.
redis-server --port 6379 --bind 127.0.0.1 --save '' --appendonly no --dir "$data" --enable-debug-command yes \
  --logfile "$out/redis-server.log" &
direct=$!
wait_ping || { stop $direct; exit 1; }
echo "== direct redis-server $(redis-cli -p 6379 info server | tr -d '\r' | sed -n 's/^redis_version://p')"
run_suites direct
stop $direct
rm -rf "$data"

http_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
node bin/respgate dev --ephemeral --port 6379 --http-port "$http_port" --vector-port off --queue-port off \
  --log-level warn >"$out/respgate.log" 2>&1 &
proxy=$!
wait_ping || { stop $proxy; exit 1; }
echo "== through the proxy (respgate dev)"
run_suites proxy
stop $proxy

for s in "${suites[@]}"; do
  comm -23 "$out/$s.proxy.failed" "$out/$s.direct.failed" >"$out/$s.only"
  echo "== $s: $(wc -l <"$out/$s.only") proxy-only failures ($out/$s.only)"
  cat "$out/$s.only"
done
