#!/usr/bin/env bash
# Runs a test suite of ours under valgrind's leak checker and prints its summary.
# Usage: scripts/leak-check.sh [SUITE]   (default JSONTests; the name of a Tests/ folder)
# valgrind 3.19 cannot follow the SwiftPM test binary (it crashes once
# dispatch_main() starts the next thread), so the suite's files are compiled
# with a small runner whose main thread waits on a semaphore instead.
# Exit status: 0 clean, 3 when valgrind saw definite or indirect leaks or errors.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
ensure_setup valgrind
suite=${1:-JSONTests}
[ -d "Tests/$suite" ] || { echo "leak-check: no Tests/$suite" >&2; exit 64; }
swift build --product BLECore >/dev/null
out=.build/leak-check; mkdir -p "$out"
swiftc -swift-version 6 -o "$out/$suite" \
    -I .build/debug/Modules -I Core/Sources/CJSONC -I Core/Sources/CDBus \
    $(pkg-config --cflags-only-I json-c dbus-1 | sed 's/-I/-Xcc -I/g') \
    -L .build/debug -lBLECore -Xlinker -rpath -Xlinker "$PWD/.build/debug" \
    "Tests/$suite"/*.swift scripts/leak-check/main.swift
status=0
valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=3 \
    "$out/$suite" >"$out/$suite.out" 2>"$out/$suite.valgrind.log" || status=$?
grep -ah "Test run with" "$out/$suite.out" "$out/$suite.valgrind.log" || true
grep -E '(definitely|indirectly|possibly) lost:|ERROR SUMMARY' "$out/$suite.valgrind.log"
echo "leak-check: full log in $out/$suite.valgrind.log; exit $status"
exit "$status"
