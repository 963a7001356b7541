#!/usr/bin/env bash
# Installs what respgate needs on a fresh Debian machine: redis-server and redis-tools (apt-get,
# only when missing) and the npm packages (npm ci, only when node_modules is missing or stale).
# With --for-tests it also installs what the test suite drives: redis-py (Debian's python3-redis), RQ (python3-rq) and Sidekiq (ruby-sidekiq).
set -euo pipefail
for_tests=false
[ "${1:-}" = "--for-tests" ] && for_tests=true
cd "$(dirname "$0")/.."

log() { printf 'respgate setup: %s\n' "$*" >&2; }

need_apt=()
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
command -v redis-cli >/dev/null 2>&1 || need_apt+=(redis-tools)
if $for_tests && ! /usr/bin/python3 -c 'import redis' >/dev/null 2>&1; then need_apt+=(python3-redis); fi
if $for_tests && ! /usr/bin/python3 -c 'import rq' >/dev/null 2>&1; then need_apt+=(python3-rq); fi
if $for_tests && ! ruby -e 'require "sidekiq"' >/dev/null 2>&1; then need_apt+=(ruby-sidekiq); fi
if [ "${#need_apt[@]}" -gt 0 ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    log "missing ${need_apt[*]} and no apt-get here: install Redis 7 (redis-server, redis-cli) and retry"; exit 1
  fi
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else log "installing ${need_apt[*]} needs root: run as root or install sudo"; exit 1; fi
  fi
  log "installing ${need_apt[*]} with apt-get (one time)..."
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
  # The Debian package may start a system redis on 6379; respgate never uses it.
fi

stamp=node_modules/.package-lock.json
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ package.json -nt "$stamp" ]; then
  log "installing npm packages..."
  npm ci --no-audit --no-fund --loglevel=error
fi

# The compiled CLI starts faster and runs faster than the sources through tsx; bin/respgate uses it
# only while it is newer than every source file.
if ! $for_tests; then
  if [ ! -f dist/bundle/cli.js ] || [ -n "$(find src -newer dist/bundle/cli.js -print -quit)" ]; then
    log "building (tsc, then the bundle)..."
    npm run --silent build
  fi
fi
