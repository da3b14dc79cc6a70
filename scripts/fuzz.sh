#!/usr/bin/env bash
# Fuzzes every target (or those named) with libFuzzer for a bounded time each.
#
#   scripts/fuzz.sh [--seconds N] [--update-corpus] [TARGET...]
#
# Builds blefuzz once with --sanitize=fuzzer --sanitize=address in its own
# scratch path (.build/fuzz; the normal build is untouched), then runs each
# target on a copy of its checked-in corpus (Tests/Fuzz/Corpus/<target>) for
# N seconds (default $FUZZ_SECONDS, else 30). New inputs go to
# .build/fuzz/run/<target>/new; --update-corpus merges the ones that add
# coverage into the checked-in corpus.
#
# Prints a table: executions, executions per second, coverage (edges) and
# features, corpus size, new inputs, peak RSS. Every crash, leak, timeout or
# broken invariant fails the script, and its reproducer is printed (path,
# bytes as base64) with the commands that replay it. docs/testing.md says
# what to do with one: it becomes a file under Tests/Fuzz/Regressions/<target>/
# and a test of the fix.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

seconds=${FUZZ_SECONDS:-30}
update=0
targets=()
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds=$2; shift 2 ;;
        --update-corpus) update=1; shift ;;
        -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
        -*) echo "fuzz.sh: unknown option $1" >&2; exit 64 ;;
        *) targets+=("$1"); shift ;;
    esac
done
ensure_setup

scratch=.build/fuzz
stage_start=$(date +%s)
log "fuzz: build blefuzz (-sanitize=fuzzer,address, $scratch)"
mkdir -p "$scratch"
# swiftc keeps only the last -sanitize= it is given, so SwiftPM's two --sanitize options would
# compile for ASan alone (no coverage): one -sanitize=fuzzer,address after SwiftPM's own.
# gold warns once per sanitizer runtime symbol it cannot export: noise, filtered.
if ! swift build --product blefuzz --sanitize=fuzzer --scratch-path "$scratch" \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DBLEFUZZ_LIBFUZZER >"$scratch/build.log" 2>&1; then
    grep -v "Cannot export local symbol" "$scratch/build.log" | tail -40 >&2
    echo "fuzz.sh: the fuzzing build failed" >&2
    exit 1
fi
grep -v "Cannot export local symbol" "$scratch/build.log" | tail -2
blefuzz=$scratch/debug/blefuzz
build_seconds=$(($(date +%s) - stage_start))

if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(ls Tests/Fuzz/Corpus)
fi

# Swift's own crash reporter would race libFuzzer's handler (and can hang);
# libFuzzer and ASan print the stack.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}

rows=()
failed=()
for target in "${targets[@]}"; do
    corpus=Tests/Fuzz/Corpus/$target
    [ -d "$corpus" ] || { echo "fuzz.sh: no corpus directory $corpus (unknown target?)" >&2; exit 64; }
    work=$scratch/run/$target
    rm -rf "$work"
    mkdir -p "$work/new" "$work/artifacts"
    log "fuzz: $target for ${seconds} s"
    status=0
    # -timeout: an input taking 10 s is a hang; -rss_limit_mb: a runaway allocation is a finding.
    "$blefuzz" "$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$work/artifacts/" "$work/new" "$corpus" >"$work/log" 2>&1 || status=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
    rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$work/log" | tail -1)
    time=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$work/log" | tail -1)
    last=$(grep -E '^#[0-9]+' "$work/log" | tail -1 || true)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
    new=$(find "$work/new" -type f | wc -l)
    rate=-
    [ -n "$runs" ] && [ -n "$time" ] && [ "$time" -gt 0 ] && rate=$((runs / time))
    result=ok
    if [ "$status" -ne 0 ]; then
        result="FAILED ($status)"
        failed+=("$target")
        echo "==================== fuzz: $target FAILED (exit $status) ====================" >&2
        grep -v "Cannot export local symbol" "$work/log" | tail -60 >&2
        for artifact in "$work"/artifacts/*; do
            [ -f "$artifact" ] || continue
            echo "--- reproducer: $artifact ($(stat -c %s "$artifact") bytes), base64:" >&2
            base64 -w 0 "$artifact" | head -c 4096 >&2
            echo >&2
            echo "--- replay it: $blefuzz $target $artifact" >&2
            echo "    or in a normal build: .build/debug/blefuzz $target $artifact" >&2
            echo "    then keep it: cp $artifact Tests/Fuzz/Regressions/$target/ (docs/testing.md)" >&2
        done
    elif [ "$update" -eq 1 ] && [ "$new" -gt 0 ]; then
        before=$(find "$corpus" -type f | wc -l)
        "$blefuzz" "$target" -merge=1 "$corpus" "$work/new" >"$work/merge.log" 2>&1
        result="ok, corpus $before -> $(find "$corpus" -type f | wc -l)"
    fi
    rows+=("$(printf '%-24s %6s %10s %8s %6s %7s %6s %5s %7s  %s' "$target" "${time:--}" "${runs:--}" "$rate" \
        "${cov:--}" "${ft:--}" "${corp:--}" "$new" "${rss:--}" "$result")")
done

echo
printf '%-24s %6s %10s %8s %6s %7s %6s %5s %7s  %s\n' target s execs execs/s cov ft corpus new rss_mb result
printf '%s\n' "${rows[@]}"
total=$(($(date +%s) - stage_start))
echo "fuzz: build ${build_seconds} s, total ${total} s, ${#targets[@]} targets x ${seconds} s, $(nproc) cores," \
    "load $(cut -d' ' -f1-3 /proc/loadavg)"
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: FAILED: ${failed[*]} (reproducers above; logs in $scratch/run/<target>/log)" >&2
    exit 1
fi
