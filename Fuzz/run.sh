#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer) of the parsers that read client input: builds the `fuzz`
# executable (Package.swift adds it only when BAAS_FUZZ is set) and runs each target for a bounded
# time (as many at once as there are cores), starting from the committed seeds in
# Fuzz/corpus/<target>/. What a run learns goes to .local/fuzz/corpus/<target>/ (--merge folds its new coverage into the committed corpus);
# crashing inputs go to .local/fuzz/crashes/. Exits non-zero when any target crashed, timed out
# or ran out of memory.
#
#   Fuzz/run.sh                      every target, 60 s each (CI)
#   Fuzz/run.sh --seconds 1800       the longer run
#   Fuzz/run.sh --merge where json   two targets, then keep what they found
#   BAAS_FUZZ_TARGET=json .build-fuzz/debug/fuzz FILE   replays one input (a crash artifact)
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d /opt/swift/usr/bin ] && export PATH=/opt/swift/usr/bin:$PATH

all_targets=(where json multipart engineio)
seconds=60
scratch=.build-fuzz
jobs=""
merge=false
targets=()

usage() {
    echo "usage: Fuzz/run.sh [--seconds N] [--scratch-path P] [--jobs J] [--merge] [target…]" >&2
    echo "       targets: ${all_targets[*]} (default: all)" >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) [ $# -ge 2 ] || usage; seconds=$2; shift 2 ;;
        --scratch-path) [ $# -ge 2 ] || usage; scratch=$2; shift 2 ;;
        --jobs) [ $# -ge 2 ] || usage; jobs=$2; shift 2 ;;
        --merge) merge=true; shift ;;
        -h | --help) usage ;;
        -*) usage ;;
        *) targets+=("$1"); shift ;;
    esac
done
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "error: --seconds takes a positive number" >&2; exit 2; }
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
for target in "${targets[@]}"; do
    [[ " ${all_targets[*]} " == *" $target "* ]] || { echo "error: unknown target '$target'" >&2; usage; }
done

# files-service (the multipart target) builds against libvips: a fresh machine installs it first.
source Deploy/lib/common.sh
ensure_system_packages

build_flags=(--product fuzz --scratch-path "$scratch")
[ -n "$jobs" ] && build_flags+=(-j "$jobs")
echo "== building the fuzz product in $scratch"
BAAS_FUZZ=1 swift build "${build_flags[@]}"
fuzzer="$(BAAS_FUZZ=1 swift build "${build_flags[@]}" --show-bin-path)/fuzz"

work=.local/fuzz
mkdir -p "$work/crashes" "$work/logs"
# Swift's runtime keeps caches for the life of the process: LeakSanitizer would call them leaks.
export ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}"
# Swift's backtracer reads memory the address sanitizer then reports; libFuzzer prints the stack.
export SWIFT_BACKTRACE=enable=no

# The value of `stat::<name>:` in a libFuzzer log, or "?".
final_stat() { grep -oE "stat::$2: +[0-9]+" "$1" | awk '{print $2}' | tail -1 | grep . || echo "?"; }
# The value after `<name>:` on the last status line of a libFuzzer log, or "?".
last_status() { grep -E "^#[0-9]+" "$1" | tail -1 | grep -oE "$2: [0-9]+" | awk '{print $2}' | grep . || echo "?"; }

# fuzz_one TARGET: one bounded run; its exit status goes to the target's .status file.
fuzz_one() {
    local target=$1 status=0
    local seeds=Fuzz/corpus/$target learned=$work/corpus/$target log=$work/logs/$target.log
    mkdir -p "$seeds" "$learned"
    # The outer timeout only guards against a fuzzer that ignores its own time limit.
    BAAS_FUZZ_TARGET=$target timeout --kill-after=30 $((seconds + 120)) "$fuzzer" "$learned" "$seeds" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$work/crashes/$target-" >"$log" 2>&1 || status=$?
    echo "$status" >"$work/logs/$target.status"
}

# As many targets at once as there are cores: each fuzzer is one process on one core.
parallel=$(nproc 2>/dev/null || echo 1)
running=()
for target in "${targets[@]}"; do
    if [ ${#running[@]} -ge "$parallel" ]; then
        wait "${running[0]}" || true
        running=("${running[@]:1}")
    fi
    echo "== fuzzing '$target' for ${seconds}s (log: $work/logs/$target.log)"
    rm -f "$work/logs/$target.status"
    fuzz_one "$target" &
    running+=($!)
done
for pid in "${running[@]}"; do wait "$pid" || true; done

failed=()
summary=()
for target in "${targets[@]}"; do
    log=$work/logs/$target.log
    status=$(cat "$work/logs/$target.status" 2>/dev/null || echo 1)
    executions=$(final_stat "$log" number_of_executed_units)
    line="$target: executions $executions, cov $(last_status "$log" cov), ft $(last_status "$log" ft)"
    if [ "$status" -ne 0 ]; then
        artifacts=$(grep -oE "Test unit written to [^ ]+" "$log" | awk '{print $NF}' | tr '\n' ' ')
        line+=", CRASHED (exit $status) ${artifacts:-no artifact}"
        failed+=("$target")
        echo "-- '$target' failed:" >&2
        grep -m 3 -E "Fatal error|runtime failure|ERROR: |SUMMARY: " "$log" >&2 || true
        echo "-- the end of its log:" >&2
        grep -vE "^#[0-9]+" "$log" | tail -40 >&2
    else
        line+=", crashes 0"
    fi
    summary+=("$line")
    if $merge && [ "$status" -eq 0 ]; then
        echo "== merging new coverage of '$target' into Fuzz/corpus/$target"
        BAAS_FUZZ_TARGET=$target "$fuzzer" -merge=1 "Fuzz/corpus/$target" "$work/corpus/$target" >"$work/logs/$target-merge.log" 2>&1
    fi
done

echo "== fuzzing summary (${seconds}s per target)"
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
    echo "error: fuzzing found crashes in: ${failed[*]} (inputs in $work/crashes/; replay one with" \
        "BAAS_FUZZ_TARGET=<target> $fuzzer <file>)" >&2
    exit 1
fi
