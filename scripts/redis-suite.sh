#!/usr/bin/env bash
# Runs units of Redis 7.0.15's own test suite (tests/unit, external-server mode) against the proxy
# (`respgate dev`: proxy + local platform) and against a direct redis-server, and prints per unit the
# tests passed ([ok]) and failed ([err] / [exception]) on each side.
#
#   scripts/redis-suite.sh                      # the default units (those the REST upstream can support)
#   scripts/redis-suite.sh unit/type/list unit/multi   # some units
#   REDIS_SRC=/path/to/redis-7.0.15 scripts/redis-suite.sh   # a source tree you already have
#   UNIT_TIMEOUT=600 scripts/redis-suite.sh      # seconds per unit and side (default 300)
#   scripts/redis-suite.sh --acl-users unit/scripting   # the proxy in ACL users mode (below)
#
# --acl-users: the proxy runs with --acl-users (AUTH <user> <password> becomes that user's upstream
# token, through ACL RESTTOKEN) and a password for `default`; the suite has no password option, so a
# small relay (scripts/redis-suite-auth-relay.py) authenticates each of its connections as `default`
# first. Tests that create an ACL user and AUTH as it (scripting's "Script ACL check") can then run.
#
# The source tree comes from Debian's `redis` source package (the same 7.0.15 as redis-server):
# REDIS_SRC, else .cache/redis-src (fetched once with /work/shared/tools/get-redis-src when
# present, else `apt-get source redis` into that directory). Needs tclsh (Debian: tcl).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
log() { printf 'redis-suite: %s\n' "$*" >&2; }

command -v tclsh >/dev/null || { log "tclsh is missing: apt-get install tcl"; exit 1; }
src=${REDIS_SRC:-}
if [ -z "$src" ]; then
  cache=$root/.cache/redis-src
  if [ -x "$cache/redis-7.0.15/runtest" ]; then src=$cache/redis-7.0.15
  elif [ -x /work/shared/tools/get-redis-src ]; then src=$(/work/shared/tools/get-redis-src "$cache") || exit 1
  else
    mkdir -p "$cache" && (cd "$cache" && apt-get source --download-only redis >/dev/null && tar xzf redis_7.0.15.orig.tar.gz) \
      || { log "could not fetch Redis 7.0.15's source (deb-src of bookworm-security needed); set REDIS_SRC"; exit 1; }
    src=$cache/redis-7.0.15
  fi
fi
[ -x "$src/runtest" ] || { log "$src/runtest not found: REDIS_SRC must be a Redis 7.0.15 source tree"; exit 1; }

# Units whose commands the REST upstream has (see docs/compatibility.md for the units left out and why).
default_units=(
  unit/type/string unit/type/incr unit/type/list unit/type/list-2 unit/type/list-3 unit/type/hash unit/type/set
  unit/type/zset unit/type/stream unit/type/stream-cgroups unit/keyspace unit/expire unit/hyperloglog unit/bitops
  unit/bitfield unit/geo unit/scan unit/sort unit/dump unit/multi unit/pubsub unit/scripting unit/functions
  unit/info-command unit/protocol unit/quit
)
acl_users=no
if [ "${1:-}" = --acl-users ]; then acl_users=yes; shift; fi
units=("$@")
[ ${#units[@]} -eq 0 ] && units=("${default_units[@]}")
timeout_s=${UNIT_TIMEOUT:-300}
# Tests tagged with what a managed REST database does not expose (DEBUG, replication, SAVE, CONFIG SET
# maxmemory, CONFIG RESETSTAT, PFDEBUG, LATENCY, the server's process) are left out on BOTH sides,
# with the suite's own tags, as Redis' CI does for external servers.
skip_tags=(--tags -needs:debug --tags -needs:repl --tags -needs:save --tags -needs:config-maxmemory
  --tags -needs:config-resetstat --tags -needs:pfdebug --tags -needs:latency --tags -needs:local-process)

# The suite's own test-server port is searched from --baseport - 32: a base of its own per run, so two
# runs at once do not take the same port.
baseport=$((30000 + (RANDOM % 300) * 64))
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$work"; }
trap cleanup EXIT

direct_port=$(free_port)
direct_pid=
# A fresh direct redis-server for each unit: a unit's CONFIG SET (proto-max-bulk-len 10000000000 in
# one of them) must not change the next one's results (unit/protocol then waits for a 2 GB argument).
start_direct() {
  if [ -n "$direct_pid" ]; then kill "$direct_pid" 2>/dev/null; wait "$direct_pid" 2>/dev/null; fi
  redis-server --port "$direct_port" --bind 127.0.0.1 --save '' --appendonly no --enable-debug-command yes --dir "$work" --databases 16 >>"$work/direct.log" 2>&1 &
  direct_pid=$!
  pids+=($direct_pid)
  for _ in $(seq 1 100); do redis-cli -p "$direct_port" ping >/dev/null 2>&1 && return; sleep 0.05; done
}
start_direct

proxy_port=$(free_port)
http_port=$(free_port)
auth_flags=()
if [ $acl_users = yes ]; then
  export RELAY_PASSWORD=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
  auth_flags=(--acl-users --requirepass "$RELAY_PASSWORD")
fi
"$root/bin/respgate" dev --ephemeral --port "$proxy_port" --http-port "$http_port" --vector-port "$(free_port)" --queue-port "$(free_port)" --log-level warn "${auth_flags[@]}" >"$work/dev.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 300); do
  grep -q ready "$work/dev.log" 2>/dev/null && redis-cli -p "$direct_port" ping >/dev/null 2>&1 && break
  sleep 0.1
done
grep -q ready "$work/dev.log" || { log "respgate dev did not start:"; cat "$work/dev.log" >&2; exit 1; }
if [ $acl_users = yes ]; then
  relay_port=$(free_port)
  python3 "$root/scripts/redis-suite-auth-relay.py" "$relay_port" "$proxy_port" &
  pids+=($!)
  proxy_port=$relay_port
  for _ in $(seq 1 50); do redis-cli -p "$proxy_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
fi

# One unit on one side: "ok err aborted" (aborted: the unit stopped early with an exception or a timeout).
run_unit() { # port unit singledb-flag
  local out=$work/$(echo "$2" | tr / _)-$1.out
  (cd "$src" && timeout "$timeout_s" ./runtest --host 127.0.0.1 --port "$1" $3 --single "$2" "${skip_tags[@]}" --clients 1 --timeout "$timeout_s" --baseport "$baseport" >"$out" 2>&1)
  local rc=$?
  sed -i 's/\x1b\[[0-9;]*m//g' "$out" # colours off
  local ok err aborted=no
  ok=$(grep -c '^\[ok\]' "$out")
  err=$(grep -cE '^\[(err|exception)\]' "$out")
  { grep -q '^\[exception\]' "$out" || [ $rc -eq 124 ] || grep -q 'Killing still running' "$out"; } && aborted=yes
  [ $rc -eq 124 ] && aborted=timeout
  echo "$ok $err $aborted"
  cp "$out" "${SUITE_LOGS:-$work}/" 2>/dev/null || true
}

printf '%-28s %8s %8s %8s %8s  %s\n' unit 'direct' '' 'proxy' '' 'proxy aborted'
printf '%-28s %8s %8s %8s %8s\n' '' ok err ok err
for unit in "${units[@]}"; do
  start_direct
  read -r dok derr _ < <(run_unit "$direct_port" "$unit" "")
  # The dev stack's proxy has 16 databases, like redis-server: the suite's SELECT 9 works, as directly.
  read -r pok perr pab < <(run_unit "$proxy_port" "$unit" "")
  printf '%-28s %8s %8s %8s %8s  %s\n' "$unit" "$dok" "$derr" "$pok" "$perr" "$pab"
done
