#!/usr/bin/env bash
# The benchmark in one command: installs what is missing (PostgreSQL with PostGIS, wrk, a
# virtualenv with Kinto), builds release binaries, starts a private PostgreSQL cluster under
# .local/bench, and runs Benchmarks/harness/bench.py: the product through its gateway, the same
# work through pgbench, and Kinto, at 1, 32 and 128 connections; everything it starts it stops.
#   Benchmarks/run.sh            full run (10 s per case, release build) → Benchmarks/results/
#   Benchmarks/run.sh --quick    1 s per case on the tests' build (CI: keeps the harness working)
# It also measures files-service: a large upload and download on local disk and on S3 (moto),
# and downloads beside nginx serving the same bytes; and pub/sub delivery (publish → poll through
# the gateway) beside nats-server carrying the same messages; and real-time: commit throughput
# with change events, and delivery to 10,000 subscribed sockets (idle memory, latency).
# Other arguments go to bench.py (--seconds, --connections, --rows, --out, --no-kinto).
set -euo pipefail
cd "$(dirname "$0")/.."
source Deploy/lib/common.sh

quick=0
kinto=1
passed=()
for argument in "$@"; do
  case $argument in
    --quick) quick=1; passed+=("$argument") ;;
    --no-kinto) kinto=0 ;;
    *) passed+=("$argument") ;;
  esac
done

state=$PWD/.local/bench
pg_port=${BAAS_BENCH_POSTGRES_PORT:-25434}

ensure_system_packages
command -v wrk >/dev/null || { log "installing wrk"; apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
command -v pgbench >/dev/null || die "pgbench is missing (it comes with postgresql-15)"
# nginx is the floor of file downloads; moto's S3 server carries the S3 backend's transfer.
if ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ]; then
  log "installing nginx"; apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null
  # Debian starts the system's nginx on port 80; the benchmark runs its own.
  service nginx stop >/dev/null 2>&1 || true
fi
python3 -c 'import moto.server, flask_cors' 2>/dev/null || pip install -q 'moto[server]'
# NATS is the floor of pub/sub delivery, driven by PyPI's nats-py.
command -v nats-server >/dev/null || { log "installing nats-server"; apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nats-server >/dev/null; }
python3 -c 'import nats' 2>/dev/null || pip install -q nats-py
# Real-time delivery: thousands of WebSocket clients on one asyncio loop (PyPI's websockets).
python3 -c 'import websockets' 2>/dev/null || pip install -q websockets


venv=()
if [ $kinto = 1 ]; then
  if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    log "installing python3-venv"; apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
  fi
  if [ ! -x "$state/venv/bin/kinto" ]; then
    log "installing Kinto into $state/venv"
    python3 -m venv "$state/venv"
    "$state/venv/bin/pip" install -q 'kinto[postgresql]==26.5.0'
  fi
  venv=(--kinto-venv "$state/venv")
fi

# 10,000 real-time sockets at the gateway and as many in the driver.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

# The quick mode runs the tests' build, so that CI builds the project once.
if [ $quick = 1 ]; then bin=$(build_for_tests | tail -1); else bin=$(build_project release | tail -1); fi

rm -rf "$state/pki" "$state/logs" "$state/results"
mkdir -p "$state/logs"
# Room for pgbench's 128 connections beside seven pools and Kinto's; fsync stays on except in
# the quick mode, whose numbers mean nothing. A cluster left running is restarted with these.
fsync=on
[ $quick = 1 ] && fsync=off
pg_stop "$state/pg"
PG_FSYNC=$fsync PG_MAX_CONNECTIONS=400 pg_start "$state/pg" "$pg_port"
trap 'pg_stop "$state/pg"' EXIT
for database in baas_bench kinto_bench; do
  psql_super "$state/pg" "$pg_port" -d postgres -c "DROP DATABASE IF EXISTS $database WITH (FORCE)"
done
pg_bootstrap "$state/pg" "$pg_port" baas_bench
psql_super "$state/pg" "$pg_port" -d postgres -c "CREATE DATABASE kinto_bench OWNER baas"

python3 Benchmarks/harness/bench.py --bin "$bin" --state "$state" --pg-port "$pg_port" \
  --pg-password-file "$state/pg/password" "${venv[@]}" "${passed[@]}"
