#!/usr/bin/env bash
# The soak (docs/soak.md): bleagent on its simulator with 1,000 advertising
# tags, a notifying sensor, 64 control clients coming and going and a plugin
# reload every 20 s, for 10 minutes; fails if the agent's RSS, open file
# descriptors, threads or D-Bus match rules grow. Not part of scripts/test.sh.
#
#   scripts/soak.sh [--minutes M] [--devices N] [--clients C] [--reload-seconds R] [--csv FILE] [--keep]
#
# Builds the debug products first; BUILD=.build/release soaks a release build
# (build it first: swift build -c release).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
ensure_setup
ensure_packages python3-dbus
if [ -z "${BUILD:-}" ]; then
    log "build"
    swift build
fi
exec /usr/bin/python3 scripts/soak.py --build "$PWD/${BUILD:-.build/debug}" "$@"
