#!/usr/bin/env bash
# Prepares blebench (docs/benchmarks.md): the apt packages, the release build (bleagent, blesim, the Bench
# plugin, blebench) and the pinned bench venv (Bleak, bless, matplotlib). Then run .build/release/blebench.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
. scripts/bleak-venv.sh
ensure_swift
ensure_packages
log "swift build -c release"
swift build -c release
ensure_bench_venv
log "ready: .build/release/blebench (--help for its options)"
