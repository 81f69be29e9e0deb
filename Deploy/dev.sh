#!/usr/bin/env bash
# Starts the whole system locally: a private PostgreSQL cluster under .local/dev, all seven
# executables, a default app (created on the first run, reused after), and prints the gateway
# URL, app id and keys. The same lines, as `export BAAS_…` shell lines, go to
# .local/state/dev.env for scripts and benchmarks. Unless BAAS_SMTP_HOST names a relay, a local
# mail catcher (Deploy/smtp-sink.py) receives the system's email as JSON files under
# .local/dev/mail. A process that fails is started again with backoff (Deploy/lib/supervise.sh);
# Ctrl-C stops everything. BAAS_DEV_STATE moves the state (default .local/dev) and
# BAAS_DEV_ENV_FILE the shell lines (default .local/state/dev.env), as the fault suite does.
#   Deploy/dev.sh [debug|release]
set -euo pipefail
cd "$(dirname "$0")/.."
source Deploy/lib/common.sh
source Deploy/lib/supervise.sh

configuration=${1:-debug}
state=${BAAS_DEV_STATE:-$PWD/.local/dev}
env_file=${BAAS_DEV_ENV_FILE:-.local/state/dev.env}
pg_port=${BAAS_DEV_POSTGRES_PORT:-25432}
gateway_port=${BAAS_GATEWAY_PORT:-8080}
backends=(users-service data-service relations-service messaging-service files-service geo-service)

ensure_system_packages
pg_start "$state/pg" "$pg_port"
pg_bootstrap "$state/pg" "$pg_port" baas
# BAAS_DEV_BIN_DIR runs executables built already (the fault suite in Deploy/test.sh runs the tests' build).
if [ -n "${BAAS_DEV_BIN_DIR:-}" ]; then bin=$BAAS_DEV_BIN_DIR; else bin=$(build_project "$configuration" | tail -1); fi

export BAAS_POSTGRES_HOST=127.0.0.1 BAAS_POSTGRES_PORT=$pg_port BAAS_POSTGRES_USER=baas
export BAAS_POSTGRES_DATABASE=baas BAAS_POSTGRES_PASSWORD; BAAS_POSTGRES_PASSWORD=$(cat "$state/pg/password")
export BAAS_PKI_DIR=$state/pki BAAS_GATEWAY_PORT=$gateway_port
# Two malloc arenas, as the image sets them (see Deploy/Dockerfile).
export MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2}
# The key that seals stored secrets (push credentials): made once, kept with the dev state.
[ -s "$state/secrets.key" ] || (umask 077 && head -c 32 /dev/urandom | base64 > "$state/secrets.key")
export BAAS_SECRETS_KEY=${BAAS_SECRETS_KEY:-$(cat "$state/secrets.key")}
"$bin/gateway" pki-init "$BAAS_PKI_DIR" >/dev/null
for service in "${backends[@]}"; do "$bin/$service" migrate >/dev/null; done

if [ ! -s "$state/app.env" ]; then
  log "creating the default app"
  ( umask 077
    "$bin/users-service" apps create default > "$state/app.env" 2>/dev/null \
      || "$bin/users-service" apps rotate-key default all > "$state/app.env" )
fi
source "$state/app.env"
export BAAS_GATEWAY_DEFAULT_APP_ID=$BAAS_APP_ID

pids=()
stop_all() {
  trap - INT TERM EXIT
  log "stopping"
  [ ${#pids[@]} -gt 0 ] && kill -TERM "${pids[@]}" 2>/dev/null && wait "${pids[@]}" 2>/dev/null
  pg_stop "$state/pg"
  exit 0
}
trap stop_all INT TERM EXIT

mkdir -p "$state/logs"
url=http://127.0.0.1:$gateway_port
export BAAS_USERS_PUBLIC_URL=${BAAS_USERS_PUBLIC_URL:-$url}
export BAAS_FILES_PUBLIC_URL=${BAAS_FILES_PUBLIC_URL:-$url} BAAS_FILES_ROOT=${BAAS_FILES_ROOT:-$state/files}
# The gateway sends downloads from the same store itself.
export BAAS_GATEWAY_FILES_ROOT=${BAAS_GATEWAY_FILES_ROOT:-$BAAS_FILES_ROOT}
# Uploads from URLs may fetch from this machine while developing: a bare host covers its ports 80
# and 443; name another port as host:port (127.0.0.1:8000).
export BAAS_FILES_URL_ALLOWED_HOSTS=${BAAS_FILES_URL_ALLOWED_HOSTS:-127.0.0.1,localhost}
mail="a relay at ${BAAS_SMTP_HOST:-}"
if [ -z "${BAAS_SMTP_HOST:-}" ]; then
  python3 -c 'import aiosmtpd' 2>/dev/null || pip install -q aiosmtpd
  mkdir -p "$state/mail"
  export BAAS_SMTP_HOST=127.0.0.1 BAAS_SMTP_PORT=${BAAS_DEV_SMTP_PORT:-2525} BAAS_SMTP_STARTTLS=off
  : >"$state/logs/smtp-sink.log"
  supervise smtp-sink "$state/logs/smtp-sink.log" \
    python3 Deploy/smtp-sink.py --port "$BAAS_SMTP_PORT" --out "$state/mail" --until-signal &
  pids+=($!)
  mail="$state/mail/ (one JSON file per message)"
fi
# A process that fails (a crash, kill -9) is started again with backoff; the others keep serving
# meanwhile. Ctrl-C reaches every process, and a clean exit is not restarted.
for service in "${backends[@]}" gateway; do
  : >"$state/logs/$service.log"
  supervise "$service" "$state/logs/$service.log" "$bin/$service" serve &
  pids+=($!)
done

for _ in $(seq 1 120); do
  curl -fs "$url/$BAAS_APP_ID/$BAAS_REST_KEY/info" | grep -q '"ready":true' && break
  sleep 0.5
done
curl -fs "$url/$BAAS_APP_ID/$BAAS_REST_KEY/info" | grep -q '"ready":true' \
  || { tail -5 "$state"/logs/*.log >&2; die "the services did not become ready (logs in $state/logs)"; }

mkdir -p "$(dirname "$env_file")"
( umask 077
  printf 'export BAAS_URL=%s BAAS_APP_ID=%s BAAS_REST_KEY=%s BAAS_JS_KEY=%s BAAS_ANDROID_KEY=%s BAAS_IOS_KEY=%s BAAS_DOTNET_KEY=%s BAAS_AS_KEY=%s BAAS_SERVER_KEY=%s\n' \
    "$url" "$BAAS_APP_ID" "$BAAS_REST_KEY" "$BAAS_JS_KEY" "$BAAS_ANDROID_KEY" "$BAAS_IOS_KEY" "$BAAS_DOTNET_KEY" \
    "$BAAS_AS_KEY" "$BAAS_SERVER_KEY" > "$env_file" )

cat <<BANNER

  BaaS is running.
  Gateway URL     $url
  App id          $BAAS_APP_ID
  REST key        $BAAS_REST_KEY
  Server-code key $BAAS_SERVER_KEY
  Try:            curl $url/$BAAS_APP_ID/$BAAS_REST_KEY/info
  Shell lines:    source $env_file
  Email:          $mail
  Logs:           $state/logs/   A process that fails is restarted; Ctrl-C stops everything.

BANNER
wait || true
