#!/usr/bin/env bash
# Starts or stops the throwaway servers the test suite talks to: a PostgreSQL
# server and a redis-server, each on a free loopback port, with their data in DIR.
#   scripts/test-services.sh start DIR   prints SLIPWAY_TEST_DATABASE_URL=... and SLIPWAY_TEST_REDIS_URL=...
#   scripts/test-services.sh stop DIR
# The PostgreSQL server runs with fsync and synchronous_commit off (tests need no
# durability); SLIPWAY_PG_DURABLE=1 keeps PostgreSQL's defaults (the benchmarks).
set -euo pipefail
action=${1:?start|stop}
dir=${2:?data directory}

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

pg_bin() {
  if command -v pg_ctl >/dev/null 2>&1; then dirname "$(command -v pg_ctl)"; return; fi
  local found
  found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  [ -n "$found" ] || { echo "PostgreSQL server binaries (pg_ctl) not found: apt-get install postgresql" >&2; exit 1; }
  echo "$found"
}

# initdb/pg_ctl refuse to run as root: run them as the postgres user then.
as_pg_user() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$action" in
start)
  mkdir -p "$dir"
  bin=$(pg_bin)
  pgdata="$dir/pg"
  mkdir -p "$pgdata" "$dir/pgsock"
  [ "$(id -u)" = 0 ] && chown -R postgres "$pgdata" "$dir/pgsock" && chmod 755 "$dir"
  as_pg_user "$bin/initdb" -D "$pgdata" -A trust -U postgres --no-sync >"$dir/initdb.log" 2>&1
  pg_port=$(free_port)
  durability="-c fsync=off -c synchronous_commit=off"
  [ "${SLIPWAY_PG_DURABLE:-}" = 1 ] && durability=""
  as_pg_user "$bin/pg_ctl" -D "$pgdata" -l "$pgdata/server.log" -w -t 60 \
    -o "-p $pg_port -k $dir/pgsock -c listen_addresses=127.0.0.1 -c max_connections=400 $durability" \
    start >"$dir/pg_ctl.log" 2>&1
  echo "$pg_port" >"$dir/pg.port"
  echo "SLIPWAY_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:$pg_port/postgres"

  command -v redis-server >/dev/null 2>&1 || { echo "redis-server not found: apt-get install redis-server" >&2; exit 1; }
  redis_port=$(free_port)
  redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no \
    --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" --dir "$dir"
  for _ in $(seq 1 50); do [ -s "$dir/redis.pid" ] && break; sleep 0.1; done
  echo "SLIPWAY_TEST_REDIS_URL=redis://127.0.0.1:$redis_port"
  ;;
stop)
  if [ -d "$dir/pg" ]; then
    bin=$(pg_bin)
    as_pg_user "$bin/pg_ctl" -D "$dir/pg" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  if [ -s "$dir/redis.pid" ]; then kill "$(cat "$dir/redis.pid")" 2>/dev/null || true; fi
  ;;
*)
  echo "usage: $0 start|stop DIR" >&2; exit 2
  ;;
esac
