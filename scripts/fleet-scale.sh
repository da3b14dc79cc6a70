#!/usr/bin/env bash
# A fleet of N bleagent lanes on one broker, measured (docs/fleet.md, "Scale"):
# messages/s through the broker, the agents' CPU and RSS, event-to-consumer
# latency p50/p99, the RPC round trip, and how long a config pushed to every
# node takes to be applied everywhere. Sets the machine up and builds first.
#
# Usage: scripts/fleet-scale.sh [--agents N] [--seconds S] [--rpc-rate R] [--broker-url mqtt://host:port]
#   --agents N        lanes (default 50)
#   --seconds S       the measurement window (default 30)
#   --rpc-rate R      agent.status requests per lane per second over MQTT (default 1)
#   --broker-url URL  an existing broker (a cluster node) instead of a private mosquitto
# BUILD=.build/release uses a release build (then build it: swift build -c release).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
ensure_setup
if [ -z "${BUILD:-}" ]; then
    log "build"
    swift build
fi
exec python3 scripts/fleet-scale.py --build "$PWD/${BUILD:-.build/debug}" "$@"
