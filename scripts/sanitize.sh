#!/usr/bin/env bash
# Builds and runs the test suite under a sanitizer: AddressSanitizer or
# ThreadSanitizer.
#
#   scripts/sanitize.sh address|thread [--all] [--build-only]
#
# Each sanitizer builds in its own scratch path (.build/address,
# .build/thread), so the normal .build/debug is untouched and reused by
# everything else. Every process the tests start from that build (bleagent,
# blesim, blectl, the probes) runs sanitized too; all of them write their
# reports to .build/<sanitizer>/reports, and any report fails the run (a
# child's report fails it even when the test that started the child passed).
#
# Without --all only the suites listed below run: the whole suite does not
# fit CI's time under ThreadSanitizer on two cores (docs/testing.md has the
# measurements and says what is left out and why).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

sanitizer=${1:-}
case "$sanitizer" in
    address|thread) shift ;;
    *) sed -n '2,16p' "$0" >&2; exit 64 ;;
esac
all=0
build_only=0
while [ $# -gt 0 ]; do
    case "$1" in
        --all) all=1; shift ;;
        --build-only) build_only=1; shift ;;
        *) echo "sanitize.sh: unknown option $1" >&2; exit 64 ;;
    esac
done
ensure_setup

# The suites each sanitizer runs in CI (a regular expression for --filter), chosen in
# docs/testing.md: under AddressSanitizer the code at the C boundaries (json-c, libdbus) and
# every parser, with the fuzz corpora replayed; under ThreadSanitizer the in-process
# concurrency (the BLE managers' locks and streams, the control server and role host;
# DBusTests is left out while its reports are unexplained, docs/testing.md). The process suites (bleagent, blesim and blectl as
# children, minutes of wall time each) run in the normal build only.
address_suites='^(JSONTests|DBusTests|GATTTests|BLETests|IOTests|AgentCoreTests|PaymentTerminalProfileTests|FuzzTests)\.'
thread_suites='^(BLETests|AgentCoreTests|IOTests)\.'

scratch=.build/$sanitizer
reports=$PWD/$scratch/reports
stage_start=$(date +%s)
log "$sanitizer sanitizer: build ($scratch)"
mkdir -p "$scratch"
if ! swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch" >"$scratch/build.log" 2>&1; then
    grep -v "Cannot export local symbol" "$scratch/build.log" | tail -40 >&2
    echo "sanitize.sh: the $sanitizer build failed" >&2
    exit 1
fi
build_seconds=$(($(date +%s) - stage_start))
echo "$sanitizer: build ${build_seconds} s"
[ "$build_only" -eq 0 ] || exit 0

rm -rf "$reports"
mkdir -p "$reports"
filter=()
if [ "$all" -eq 0 ]; then
    if [ "$sanitizer" = address ]; then filter=(--filter "$address_suites"); else filter=(--filter "$thread_suites"); fi
fi
# Swift's crash reporter would print a second, slower stack for the same fault.
export SWIFT_BACKTRACE=enable=no
export BLESIM=$PWD/$scratch/debug/blesim
# LeakSanitizer is off for the suites: at the test process's exit it lists hundreds of
# allocations that are still reachable in ways it cannot follow (weak-reference side tables,
# which Swift points to only through a shifted pointer in the object's reference count) or held by
# what the suites leave running at exit (suspended tasks, loop threads, open test connections);
# docs/testing.md says more. Leaks are checked where the check is exact: libFuzzer after each
# input (scripts/fuzz.sh) and the soak's RSS (docs/soak.md).
export ASAN_OPTIONS="log_path=$reports/asan:detect_leaks=0:abort_on_error=0"
export TSAN_OPTIONS="log_path=$reports/tsan:halt_on_error=0:second_deadlock_stack=1"
if [ "$sanitizer" = thread ]; then
    # ThreadSanitizer does not see Synchronization.Mutex change hands under contention (its slow
    # paths live in an uninstrumented library): scripts/tsan-mutex.c tells it, preloaded into
    # every process the suites start.
    clang -shared -fPIC -O2 -o "$scratch/libtsan-mutex.so" scripts/tsan-mutex.c -ldl
    export LD_PRELOAD=$PWD/$scratch/libtsan-mutex.so
fi
test_start=$(date +%s)
status=0
swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" --disable-xctest --no-parallel \
    "${filter[@]}" 2>&1 | tee "$scratch/test.log" | grep -v "^.* passed after\|^.* started\.$" || status=${PIPESTATUS[0]}
test_seconds=$(($(date +%s) - test_start))

found=$(find "$reports" -type f | wc -l)
if [ "$found" -gt 0 ]; then
    for report in "$reports"/*; do
        echo "==================== $sanitizer sanitizer report: $report ====================" >&2
        head -120 "$report" >&2
    done
fi
echo "$sanitizer: build ${build_seconds} s, tests ${test_seconds} s (exit $status), reports $found," \
    "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$status" -eq 0 ] && [ "$found" -eq 0 ]
