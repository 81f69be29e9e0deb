#!/usr/bin/env bash
# Runs the full test suite: installs what is missing (as root), starts a private PostgreSQL
# cluster under .local/test with a PostGIS template database, checks docker-compose.yml
# against the Compose specification and the documents against the tree, then `swift test` (mail tests start Deploy/smtp-sink.py,
# a real SMTP server from PyPI's aiosmtpd; the APNs client tests start Tests/Peers/apns-standin.py,
# HTTP/2 over TLS on PyPI's h2 with the provider token checked by PyJWT; the S3 storage tests run
# against PyPI's moto server, started here; the scheduling test runs messaging-service
# processes, built here, and the real-time replica test a second gateway too; real-time tests
# drive Tests/Peers/rt-client.py, PyPI's python-socketio; openapi.json is checked by PyPI's
# openapi-spec-validator and fuzzed by its schemathesis) (extra arguments go to swift test).
# swift test's whole output goes to .local/test/swift-test.log; the terminal shows each test's
# pass or fail and the totals. A watchdog ends a run in which no test finishes for
# BAAS_TEST_STALL_SECONDS (default 600), with a thread dump of the test process first. The
# run's last line is always `N passed, M failed` (the Swift tests, and the fault suite as one).
# `Deploy/test.sh --fast` runs only the tests tagged `fast` (no database, no peer): seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
source Deploy/lib/common.sh

state=$PWD/.local/test
pg_port=${BAAS_TEST_POSTGRES_PORT:-25433}
test_log=$state/swift-test.log
thread_dump=$state/thread-dump.txt
stall_marker=$state/stalled
stall_seconds=${BAAS_TEST_STALL_SECONDS:-600}
# What the exit trap reads: what to stop, and what the run came to.
moto_pid="" pg_started="" swift_pid="" view_pid="" watchdog_pid=""
tests_started="" swift_status="" fault_result="" final_status=1

# Shared by the terminal view, the watchdog and the summary (awk): Swift Testing's and XCTest's
# lines in swift test's output.
report_lib=$(cat <<'AWK'
function setup() {
  esc = sprintf("%c", 27); q = sprintf("%c", 39)
  nsymbols = split("✔ ✘ ➜ ? ◇", symbols, " ")
}
# The line without colours or a carriage return.
function plain(line) { gsub(esc "\\[[0-9;]*m", "", line); sub(/\r$/, "", line); return line }
# Swift Testing's report in `line`, from its symbol on ("" when there is none): a service's log
# line written without its newline yet may sit in front of it.
function swift_testing(line,    i, at, found) {
  found = 0
  for (i = 1; i <= nsymbols; i++) {
    at = index(line, symbols[i] " Test ")
    if (at > 0 && (found == 0 || at < found)) found = at
  }
  return found ? substr(line, found) : ""
}
# What a Swift Testing report says: run, failed, passed, skipped, started, issue, or "".
function kind(r,    t) {
  t = r; sub(/^[^ ]+ Test /, "", t)
  if (t ~ /^run with [0-9]+ tests? /) return "run"
  if (t ~ /^run started\./ || t ~ /^case passing /) return ""
  if (t ~ / recorded (an issue|a warning|a known issue)/) return "issue"
  if (t ~ / failed after [0-9.]+ seconds/) return "failed"
  if (t ~ / passed after [0-9.]+ seconds/) return "passed"
  if (t ~ / was cancelled after [0-9.]+ seconds/ || t ~ / skipped(\.|: )/) return "skipped"
  if (t ~ / started\.$/) return "started"
  return ""
}
# The test a Swift Testing report is about.
function name(r,    t) {
  t = r; sub(/^[^ ]+ Test /, "", t)
  sub(/( with [0-9]+ test cases?)? (passed|failed|was cancelled) after [0-9.]+ seconds.*$/, "", t)
  sub(/ (skipped|started)(\.|: ).*$/, "", t)
  return t
}
# The XCTest case a `Test Case '…' …` line is about, and what it says of it.
function xctest_name(line,    t) { t = line; sub("^Test Case " q, "", t); sub(q " .*$", "", t); return t }
function xctest_verb(line,    t) { t = line; sub("^Test Case " q "[^" q "]*" q " ", "", t); sub(/ .*$/, "", t); return t }
AWK
)

# The terminal's view of swift test's output (awk): each test's pass or fail (with the first line
# of each issue), the totals, and what a failed build or a crash says.
view_program=$(cat <<'AWK'
BEGIN { setup() }
function show(text) { print text; fflush() }
{
  line = plain($0)
  r = swift_testing(line)
  if (r != "") {
    k = kind(r)
    if (k == "passed" || k == "failed" || k == "skipped" || k == "run") show(r)
    else if (k == "issue") show(substr(r, 1, 300))
    next
  }
  if (line ~ "^Test Case " q && xctest_verb(line) != "started") { show(line); next }
  if (line ~ "^Test Suite " q "All tests" q " (passed|failed)") { show(line); totals = 1; next }
  if (totals && line ~ /Executed [0-9]+ tests?, with/) { show(line); totals = 0; next }
  if (line ~ /^error: / || line ~ /^[^ ]+:[0-9]+:[0-9]+: error: / || line ~ /^Build complete!/ \
      || line ~ /(^|: )Fatal error: / || line ~ /Program crashed/) show(line)
}
AWK
)

# What the run came to, from swift test's output (awk): the failed tests' names, and last the
# line CI reads, `N passed, M failed`; it exits 1 when anything failed. Tests that started but
# never ended (a crash, a stall) count as failed.
summary_program=$(cat <<'AWK'
BEGIN { setup() }
{
  line = plain($0)
  r = swift_testing(line)
  if (r != "") {
    k = kind(r)
    if (k == "run") { t = r; sub(/^[^ ]+ Test run with /, "", t); run_total = t + 0; run_ended = 1 }
    else if (k == "started") started[name(r)]++
    else if (k == "passed") { passed++; ended[name(r)]++ }
    else if (k == "skipped") { skipped++; ended[name(r)]++ }
    else if (k == "failed") { failures[++failed] = name(r); ended[name(r)]++ }
    next
  }
  if (line ~ "^Test Case " q) {
    n = "Test Case " q xctest_name(line) q; v = xctest_verb(line)
    if (v == "started") started[n]++
    else if (v == "passed") { xc_passed++; ended[n]++ }
    else if (v == "skipped") { xc_skipped++; ended[n]++ }
    else if (v == "failed") { failures[++failed] = n; xc_failed++; ended[n]++ }
    next
  }
  if (line ~ /Executed [0-9]+ tests?, with [0-9]+ failures?/) {
    t = line; sub(/^.*Executed /, "", t); xc_total = t + 0; xc_ended = 1
  }
}
END {
  for (n in started) if (started[n] > ended[n]) { failures[++failed] = n " (did not finish)"; unfinished++ }
  st_failed = failed - xc_failed - unfinished
  good = run_ended ? run_total - st_failed - skipped : passed
  good += xc_ended ? xc_total - xc_failed - xc_skipped : xc_passed
  if (good < 0) good = 0
  if (faults == "passed") good++
  if (faults == "failed") failures[++failed] = "the fault suite (Tests/Faults/faults.py --bounded)"
  if (status != 0 && failed == 0) failures[++failed] = "swift test (exit status " status ")"
  if (failed > 0) {
    if (stalled != "") print "swift test stalled: " stalled
    print "Failed:"
    for (i = 1; i <= failed; i++) print "  " failures[i]
    print "Full log: " logfile
  }
  if (skipped + xc_skipped > 0) print skipped + xc_skipped " skipped"
  printf "%d passed, %d failed\n", good, failed
  exit (failed > 0)
}
AWK
)

# The tests that started and have not ended (awk), for the watchdog's report.
unfinished_program=$(cat <<'AWK'
BEGIN { setup() }
{
  r = swift_testing(plain($0))
  if (r == "") next
  k = kind(r)
  if (k == "started") started[name(r)]++
  else if (k == "passed" || k == "failed" || k == "skipped") ended[name(r)]++
}
END { for (n in started) if (started[n] > ended[n]) print "  " n }
AWK
)

# A line of swift test's output that says a test finished, or that tests began (grep -E).
progress_pattern=' Test .+ (passed|failed|was cancelled) after [0-9.]+ seconds| Test .+ skipped|Test run started|^Test Case .+ (passed|failed|skipped)|^Test Suite .+ started'

# process_tree PID: "pid command line" of every process below PID.
process_tree() {
  ps -e -o pid= -o ppid= -o args= | awk -v root="$1" '
    { pid[NR] = $1; parent[$1] = $2; line[NR] = $0 }
    END {
      below[root] = 1
      do {
        grown = 0
        for (i = 1; i <= NR; i++)
          if (!(pid[i] in below) && (parent[pid[i]] in below)) { below[pid[i]] = 1; grown = 1 }
      } while (grown)
      for (i = 1; i <= NR; i++)
        if (pid[i] != root && (pid[i] in below)) { sub(/^ *[0-9]+ +[0-9]+ +/, "", line[i]); print pid[i], line[i] }
    }'
}

# kill_tree PID: SIGKILL to PID and everything below it at once (all found first: a process
# whose parent dies first is no longer below PID).
kill_tree() {
  local pids
  pids=$(process_tree "$1" | cut -d' ' -f1) || true
  # shellcheck disable=SC2086 # one word per pid
  kill -KILL "$1" $pids 2>/dev/null || true
}

# test_runners PID: the test processes (the *.xctest) below swift test.
test_runners() { process_tree "$1" | awk '$2 ~ /\.xctest$/ { print $1 }'; }

# Prints what the stalled run is doing (the tests still running and a thread dump of the test
# process: the *.xctest below swift test), then ends swift test ($1) and everything it started.
report_stall() {
  local runners runner
  echo "no test finished for ${stall_seconds}s; swift test was ended (thread dump: $thread_dump)" >"$stall_marker"
  runners=$(test_runners "$1")
  {
    echo
    echo "error: no test has finished for ${stall_seconds}s (BAAS_TEST_STALL_SECONDS): the tests are stuck."
    echo "Still running:"
    awk "$report_lib"$'\n'"$unfinished_program" "$test_log"
    : >"$thread_dump"
    for runner in $runners; do
      echo "Thread dump of the test process (pid $runner), also in $thread_dump:"
      timeout -k 10 300 gdb -p "$runner" -batch -iex 'set complaints 0' -ex 'thread apply all bt' >>"$thread_dump" 2>&1
    done
    cat "$thread_dump"
    [ -n "$runners" ] || echo "(no *.xctest process below swift test: no thread dump)"
    echo "error: ending swift test and every process it started."
  } >&2
  kill_tree "$1"
}

# The watchdog over swift test ($1), in the background: armed once tests begin (the test process
# runs, or the log says so), it waits for a test to finish (reading only what the log gained
# since its last look); after $stall_seconds without one it reports the stall and ends swift
# test. It ends with swift test.
watch_for_stall() {
  set +e
  local offset=0 size gained armed="" quiet_since=$SECONDS
  while kill -0 "$1" 2>/dev/null; do
    sleep 10
    size=$(stat -c %s "$test_log" 2>/dev/null) || size=0
    [ "$size" -ge "$offset" ] || offset=0
    gained=$(tail -c +$((offset + 1)) "$test_log" | head -c $((size - offset)) | LC_ALL=C grep -a -c -E "$progress_pattern")
    offset=$size
    if [ "${gained:-0}" -gt 0 ]; then
      armed=1 quiet_since=$SECONDS
    elif [ -z "$armed" ]; then
      [ -z "$(test_runners "$1")" ] || armed=1 quiet_since=$SECONDS
    elif [ $((SECONDS - quiet_since)) -ge "$stall_seconds" ]; then
      report_stall "$1"
      return
    fi
  done
}

# Runs swift test with its output in $test_log, the terminal's view of it and the watchdog
# beside it; sets swift_status.
run_swift_test() {
  mkdir -p "$state"
  : >"$test_log"
  rm -f "$stall_marker" "$thread_dump"
  tests_started=1
  # --verbose: Swift Testing then says when each test starts, so a stall names the tests still
  # running; stdbuf: its lines reach the log as they are written, not when a buffer fills.
  stdbuf -oL -eL swift test "${test_build_flags[@]}" --skip-build --verbose "$@" >>"$test_log" 2>&1 &
  swift_pid=$!
  # mawk reads a pipe a block at a time unless told to read it line by line.
  local line_by_line=()
  [[ $(awk -W version 2>/dev/null) != *mawk* ]] || line_by_line=(-W interactive)
  ( tail -n +1 -f --pid="$swift_pid" "$test_log" | awk "${line_by_line[@]}" "$report_lib"$'\n'"$view_program" ) &
  view_pid=$!
  watch_for_stall "$swift_pid" &
  watchdog_pid=$!
  swift_status=0
  wait "$swift_pid" || swift_status=$?
  swift_pid=""
  # The view follows the log until a second after swift test has ended; bounded all the same.
  for _ in $(seq 1 40); do kill -0 "$view_pid" 2>/dev/null || break; sleep 0.25; done
  stop_background
}

# Ends whichever of the watchdog, swift test (the run was interrupted) and the view still run.
stop_background() {
  local pid
  for pid in "$watchdog_pid" "$swift_pid" "$view_pid"; do
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || continue
    kill_tree "$pid"
    wait "$pid" 2>/dev/null || true
  done
  watchdog_pid="" swift_pid="" view_pid=""
}

# Prints the summary, its last line `N passed, M failed`; sets final_status (non-zero on any
# failure, the run's own status first).
summarize() {
  local status=$1 counted=0
  if [ -z "$tests_started" ]; then
    echo "error: the run stopped before the tests started (exit $status); see above."
    echo "0 passed, 1 failed"
    final_status=$((status == 0 ? 1 : status))
    return
  fi
  awk -v status="${swift_status:-$status}" -v faults="$fault_result" -v logfile="$test_log" \
    -v stalled="$(cat "$stall_marker" 2>/dev/null)" "$report_lib"$'\n'"$summary_program" "$test_log" || counted=$?
  if [ "$status" -ne 0 ]; then final_status=$status; elif [ "$counted" -ne 0 ]; then final_status=1; else final_status=0; fi
}

# On every exit: end what the run started, then the summary, which is the run's last output.
finish() {
  local status=$?
  set +e
  trap '' INT TERM HUP
  stop_background
  [ -z "$moto_pid" ] || kill "$moto_pid" 2>/dev/null
  [ -z "$pg_started" ] || pg_stop "$state/pg"
  summarize "$status"
  exit "$final_status"
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
[[ $stall_seconds =~ ^[1-9][0-9]*$ ]] || die "BAAS_TEST_STALL_SECONDS must be a whole number of seconds"

ensure_system_packages
if [ "${1:-}" = --fast ]; then
  shift
  # The tier a contributor runs while editing (docs/TESTING.md): the tests tagged `fast` — no
  # database, no peer, no process — on a debug build unless BAAS_TEST_CONFIGURATION says otherwise.
  [ -n "${BAAS_TEST_CONFIGURATION:-}" ] || test_build_flags=(-c debug)
  build_for_tests >/dev/null
  fast_filters=()
  while read -r pattern; do fast_filters+=(--filter "$pattern"); done < <(python3 Deploy/fast-tests.py)
  run_swift_test "${fast_filters[@]}" "$@"
  exit "$swift_status"
fi
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
pg_started=1
s3_port=${BAAS_TEST_S3_PORT:-25435}
mkdir -p "$state"
python3 -m moto.server -H 127.0.0.1 -p "$s3_port" >"$state/moto.log" 2>&1 &
moto_pid=$!
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
# No client number may reach a conversion that traps (a whole service went down to one).
python3 Deploy/check-conversions.py
# The architecture's walks and every path the documents name must still exist.
python3 Deploy/check-docs.py --self-test
python3 Deploy/check-docs.py
# One style, checked: .swift-format is the configuration (`swift format -i -r --parallel .` applies it).
swift format lint --strict --recursive --parallel Package.swift Shared Services Tests Benchmarks Fuzz

export BAAS_TEST_POSTGRES_HOST=127.0.0.1 BAAS_TEST_POSTGRES_PORT=$pg_port BAAS_TEST_POSTGRES_USER=baas
export BAAS_TEST_POSTGRES_PASSWORD; BAAS_TEST_POSTGRES_PASSWORD=$(cat "$state/pg/password")
export BAAS_TEST_S3_ENDPOINT=http://127.0.0.1:$s3_port
# One build of the tests and every executable: scheduling and real-time replica tests run
# messaging-service (and a second gateway) as processes of their own, to kill or restart one.
export BAAS_TEST_BIN_DIR; BAAS_TEST_BIN_DIR=$(build_for_tests | tail -1)
run_swift_test "$@"
[ "$swift_status" -eq 0 ] || exit "$swift_status"
# The fault suite in its bounded form (one kill -9, one PostgreSQL restart, one silent service)
# against the system as separate processes (the executables just built); `python3
# Tests/Faults/faults.py` runs every kill.
# Recovery is bounded by 2 s in the full run, with slack here for a loaded machine. An hour
# bounds a hang; SIGINT lets it stop the system it started.
if [ $# -eq 0 ]; then
  fault_result=failed
  BAAS_DEV_BIN_DIR=$BAAS_TEST_BIN_DIR BAAS_FAULT_RECOVERY_SECONDS=${BAAS_FAULT_RECOVERY_SECONDS:-10} timeout -s INT -k 60 3600 \
    python3 Tests/Faults/faults.py --bounded
  fault_result=passed
fi
