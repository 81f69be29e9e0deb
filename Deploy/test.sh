#!/usr/bin/env bash
# Runs the full test suite: installs what is missing (as root), starts a private PostgreSQL
# cluster under .local/test with a PostGIS template database, checks docker-compose.yml
# against the Compose specification, then `swift test` (mail tests start Deploy/smtp-sink.py,
# a real SMTP server from PyPI's aiosmtpd; the APNs client tests start Tests/Peers/apns-standin.py,
# HTTP/2 over TLS on PyPI's h2 with the provider token checked by PyJWT; the S3 storage tests run
# against PyPI's moto server, started here; the scheduling test runs messaging-service
# processes, built here, and the real-time replica test a second gateway too; real-time tests
# drive Tests/Peers/rt-client.py, PyPI's python-socketio; openapi.json is checked by PyPI's
# openapi-spec-validator and fuzzed by its schemathesis) (extra arguments go to swift test).
set -euo pipefail
cd "$(dirname "$0")/.."
source Deploy/lib/common.sh

state=$PWD/.local/test
pg_port=${BAAS_TEST_POSTGRES_PORT:-55433}

ensure_system_packages
python3 -c 'import yaml, jsonschema, aiosmtpd' 2>/dev/null || pip install -q pyyaml jsonschema aiosmtpd
python3 -c 'import moto.server, flask_cors' 2>/dev/null || pip install -q 'moto[server]'
python3 -c 'import h2, jwt, cryptography' 2>/dev/null || pip install -q h2 pyjwt cryptography
python3 -c 'import socketio, websocket' 2>/dev/null || pip install -q 'python-socketio[client]>=5,<6'
python3 -c 'import openapi_spec_validator' 2>/dev/null || pip install -q 'openapi-spec-validator>=0.7'
schemathesis --version 2>/dev/null | grep -q 4.32.5 || pip install -q 'schemathesis==4.32.5'
# Every cluster test runs seven services with their own pools, all suites at once. Creating
# the tests' databases writes gigabytes of log within seconds: no cap on what a change slot may
# hold (a capped slot is invalidated and its reader's connection ended mid-test).
PG_FSYNC=off PG_MAX_CONNECTIONS=1000 PG_SLOT_WAL_KEEP=-1 pg_start "$state/pg" "$pg_port"
s3_port=${BAAS_TEST_S3_PORT:-55435}
mkdir -p "$state"
python3 -m moto.server -H 127.0.0.1 -p "$s3_port" >"$state/moto.log" 2>&1 &
moto_pid=$!
trap 'kill $moto_pid 2>/dev/null; pg_stop "$state/pg"' EXIT
for _ in $(seq 1 100); do
  curl -fsS -o /dev/null "http://127.0.0.1:$s3_port/moto-api/" 2>/dev/null && break
  kill -0 $moto_pid 2>/dev/null || die "moto server did not start (see $state/moto.log)"
  sleep 0.2
done
pg_bootstrap "$state/pg" "$pg_port" baas_template
psql_super "$state/pg" "$pg_port" -d postgres -c "ALTER ROLE baas CREATEDB"
# Tests drop their databases WITH (FORCE); an autovacuum worker in one is not the role's own
# process, and without this membership PostgreSQL refuses to end it (a flaky 42501).
psql_super "$state/pg" "$pg_port" -d postgres -c "GRANT pg_signal_backend TO baas"
# The cluster outlives a run; change slots a killed run left behind would keep the log from
# every later run (uncapped here): none is in use before the tests start.
# (A logical slot is dropped from its own database.)
psql_super "$state/pg" "$pg_port" -d postgres -At -c \
  "SELECT slot_name || ' ' || database FROM pg_replication_slots WHERE NOT active AND database IS NOT NULL" |
  while read -r slot database; do
    psql_super "$state/pg" "$pg_port" -d "$database" -c "SELECT pg_drop_replication_slot('$slot')" >/dev/null
  done

python3 Deploy/check-deploy.py

export BAAS_TEST_POSTGRES_HOST=127.0.0.1 BAAS_TEST_POSTGRES_PORT=$pg_port BAAS_TEST_POSTGRES_USER=baas
export BAAS_TEST_POSTGRES_PASSWORD; BAAS_TEST_POSTGRES_PASSWORD=$(cat "$state/pg/password")
export BAAS_TEST_S3_ENDPOINT=http://127.0.0.1:$s3_port
# Scheduling and real-time replica tests run messaging-service (and a second gateway) as
# processes of their own, to kill or restart one.
swift build --product messaging-service
swift build --product gateway
export BAAS_TEST_BIN_DIR; BAAS_TEST_BIN_DIR=$(swift build --show-bin-path)
swift test "$@"
# The fault suite in its bounded form (one kill -9, one PostgreSQL restart, one silent service)
# against the system as separate processes; `python3 Tests/Faults/faults.py` runs every kill.
# Recovery is bounded by 2 s in the full run, with slack here for a loaded machine.
if [ $# -eq 0 ]; then
  BAAS_FAULT_RECOVERY_SECONDS=${BAAS_FAULT_RECOVERY_SECONDS:-10} python3 Tests/Faults/faults.py --bounded
fi
