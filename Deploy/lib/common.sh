# Shared by dev.sh, test.sh and the benchmarks: system packages, a private PostgreSQL cluster
# under the project folder, and the project's build. Source it; it defines functions only.

PG_BIN=/usr/lib/postgresql/15/bin

log() { printf '\033[1m==>\033[0m %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Installs what is missing (PostgreSQL 15 with PostGIS, curl, openssl, libvips's headers and
# pkg-config, which files-service builds against) when running as root; otherwise says what to
# install.
ensure_system_packages() {
  local missing=()
  [ -x "$PG_BIN/initdb" ] || missing+=(postgresql-15)
  [ -f /usr/share/postgresql/15/extension/postgis.control ] || missing+=(postgresql-15-postgis-3)
  command -v curl >/dev/null || missing+=(curl)
  command -v openssl >/dev/null || missing+=(openssl)
  command -v pkg-config >/dev/null || missing+=(pkg-config)
  [ -f /usr/include/vips/vips.h ] || missing+=(libvips-dev)
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    die "missing packages: ${missing[*]} (run as root, or: sudo apt-get install ${missing[*]})"
  fi
  log "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

# The user the cluster runs as: initdb refuses root, so root hands it to 'postgres'.
pg_owner() { if [ "$(id -u)" -eq 0 ]; then echo postgres; else id -un; fi; }
as_pg_owner() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

# pg_start DIR PORT: creates (first time) and starts a private cluster in DIR on 127.0.0.1:PORT
# with its socket in DIR. The superuser 'postgres' logs in over the socket; 'baas' with the
# password in DIR/password over TCP. The log is kept for logical decoding (real-time change
# events; a slot nobody reads may hold at most 1 GB of it); a cluster left running without it
# is restarted.
pg_start() {
  local dir=$1 port=$2
  mkdir -p "$dir"
  if [ ! -f "$dir/password" ]; then
    head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' > "$dir/password"
  fi
  chmod 600 "$dir/password"
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    log "creating PostgreSQL cluster in $dir/data"
    [ "$(id -u)" -eq 0 ] && chown "$(pg_owner)" "$dir"
    as_pg_owner "$PG_BIN/initdb" -D "$dir/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
      -E UTF8 --locale=C.UTF-8 >/dev/null
  fi
  [ "$(id -u)" -eq 0 ] && chown "$(pg_owner)" "$dir"
  if as_pg_owner "$PG_BIN/pg_ctl" -D "$dir/data" status >/dev/null 2>&1 \
    && [ "$(psql_super "$dir" "$port" -d postgres -c 'SHOW wal_level' 2>/dev/null)" != logical ]; then
    log "restarting PostgreSQL with wal_level=logical"
    pg_stop "$dir"
  fi
  if ! as_pg_owner "$PG_BIN/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
    log "starting PostgreSQL on 127.0.0.1:$port"
    as_pg_owner "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=${PG_MAX_CONNECTIONS:-300} -c fsync=${PG_FSYNC:-on} -c wal_level=logical -c max_replication_slots=${PG_MAX_SLOTS:-64} -c max_slot_wal_keep_size=${PG_SLOT_WAL_KEEP:-1GB}" \
      start >/dev/null || { tail -20 "$dir/server.log" >&2; die "PostgreSQL did not start"; }
  fi
}

pg_stop() { as_pg_owner "$PG_BIN/pg_ctl" -D "$1/data" -m fast -w stop >/dev/null 2>&1 || true; }

# psql_super DIR PORT ARGS…: psql as the cluster's superuser over the socket.
psql_super() { local dir=$1 port=$2; shift 2; as_pg_owner psql -h "$dir" -p "$port" -U postgres -v ON_ERROR_STOP=1 -qAt "$@"; }

# pg_bootstrap DIR PORT DB: the 'baas' role (password from DIR/password; REPLICATION, to read
# change events from the log) and database DB with PostGIS, created by the superuser because
# the extension needs one.
pg_bootstrap() {
  local dir=$1 port=$2 db=$3
  local password; password=$(cat "$dir/password")
  psql_super "$dir" "$port" -d postgres <<SQL
SELECT 'CREATE ROLE baas LOGIN' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'baas') \gexec
ALTER ROLE baas PASSWORD '$password' REPLICATION;
SELECT 'CREATE DATABASE $db OWNER baas' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$db') \gexec
SQL
  psql_super "$dir" "$port" -d "$db" -c "CREATE EXTENSION IF NOT EXISTS postgis"
}

# The project's build: the same command in the Dockerfile and dev.sh.
build_project() { "$(dirname "${BASH_SOURCE[0]}")/../build.sh" "$@"; }

# The tests' build (Deploy/test.sh), which the benchmarks' quick mode shares so that CI builds the
# project once: every executable and every test target, optimized, with testable imports. An
# optimized build takes about as long as a debug one from scratch and runs the suite in about
# half the time; BAAS_TEST_CONFIGURATION=debug rebuilds faster after a small change.
test_build_flags=(-c "${BAAS_TEST_CONFIGURATION:-release}")
[ "${BAAS_TEST_CONFIGURATION:-release}" = debug ] || test_build_flags+=(-Xswiftc -enable-testing)
# build_for_tests: builds, then prints the folder of the executables; fails when the build does
# (errexit does not reach into the command substitutions callers run this in, so it says so itself:
# a failed build must never leave the last good test binary to be run).
build_for_tests() {
  swift build "${test_build_flags[@]}" --build-tests >&2 || return
  swift build "${test_build_flags[@]}" --show-bin-path
}
