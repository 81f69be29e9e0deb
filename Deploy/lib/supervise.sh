# shellcheck shell=bash
# supervise NAME LOG COMMAND...: runs COMMAND (output appended to LOG) and starts it again
# whenever it fails — a crash, a kill -9, any status but 0 — as compose's `restart: on-failure`
# does: after 1 s, doubling up to SUPERVISE_MAX_DELAY (30 s), back to 1 s once a run has lasted
# SUPERVISE_STABLE_SECONDS (10 s). Each restart is logged on standard error and in LOG. A clean
# exit (status 0: the command was asked to stop, as Ctrl-C asks every process of the terminal)
# ends the supervision, and so does SIGTERM, which stops the command first (waited for). Meant to
# run in the background: `supervise … &`.
supervise() {
  local name=$1 log=$2
  shift 2
  local child='' pause='' delay=1 started status
  local most=${SUPERVISE_MAX_DELAY:-30} stable=${SUPERVISE_STABLE_SECONDS:-10}
  trap supervise_stop TERM INT
  supervise_stop() {
    [ -z "$pause" ] || kill "$pause" 2>/dev/null || true
    if [ -n "$child" ]; then
      kill -TERM "$child" 2>/dev/null || true
      wait "$child" 2>/dev/null || true
    fi
    exit 0
  }
  while true; do
    started=$SECONDS
    "$@" >>"$log" 2>&1 &
    child=$!
    status=0
    wait "$child" || status=$?
    child=''
    if [ "$status" = 0 ]; then
      printf '==> %s stopped\n' "$name" | tee -a "$log" >&2
      return 0
    fi
    if (( SECONDS - started >= stable )); then delay=1; fi
    printf '==> %s exited with status %s; restarting in %ss (log: %s)\n' "$name" "$status" "$delay" "$log" | tee -a "$log" >&2
    sleep "$delay" &
    pause=$!
    wait "$pause" || true
    pause=''
    delay=$(( delay * 2 > most ? most : delay * 2 ))
  done
}
