#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and runs every test: the README's test command.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
. scripts/bleak-venv.sh
ensure_setup

log "docs lint: no issue numbers, to-do lists or work logs; links that resolve"
scripts/check-docs.py --self-test
scripts/check-docs.py

log "swift format lint"
swift format lint --strict --recursive Package.swift Core/Package.swift Core/Sources Sources Tests plugins docs/examples

log "Bleak virtualenv for Tests/BleakTests (pinned; quick when present)"
ensure_bleak_venv

log "build (once, reused by the tests)"
swift build --build-tests

log "one copy of the shared core"
scripts/check-one-copy.sh .build/debug

log "swift test"
# One test at a time: on a 2-core machine Swift's cooperative pool has two
# threads, and tests that block one (a child's waitpid, a socket poll with a
# deadline) while an in-process server needs the other could starve it.
# Seen once under load as a cascade of 60 s time limits. Serial runs take ~2 min,
# ~45 s of it the 100-run SIGKILL test of the payment lane (BLEAGENT_CRASH_RUNS).
swift test --skip-build --disable-xctest --no-parallel

log "the README's run command, bounded"
scripts/run.sh --duration 3

log "the Debian package: release build, then its contents, unit, man pages and lintian"
# lintian: the package's lint; jq and python3-seccomp: the agent under the unit's system call filter.
ensure_packages lintian jq python3-seccomp
start=$SECONDS
deb=$(scripts/package.sh)
log "scripts/package.sh took $((SECONDS - start)) s"
scripts/check-package.sh "$deb"
