#!/usr/bin/env bash
# The main job, on the embedded default: sets up a fresh Debian 12 machine,
# builds, and runs bleagent with the shipped roles.json. With backend "sim" the
# agent starts its own private bus and blesim; in the central role the
# payment-terminal scanner finds the nearest virtual terminal, connects, and
# this script sends it a payment. The agent then keeps running with blectl
# usable beside it, until Ctrl-C.
#
# Usage: scripts/run.sh [--config FILE] [--duration SECONDS]
#   --duration N  stop the agent after N seconds (default: run until interrupted)
# Exit status: 0 when the role ran (and, for the scanner, the payment reached a
# final state), 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

config=roles.json duration=""
while [ $# -gt 0 ]; do
    case "$1" in
        --config) config=$2; shift 2 ;;
        --duration) duration=$2; shift 2 ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 64 ;;
    esac
done

ensure_setup
log "build"
swift build

bin="$PWD/.build/debug"
"$bin/bleagent" --config "$config" --check-config
# The control socket as the config names it (relative paths are relative to the config's folder).
socket=$(tr -d '\n' <"$config" | sed -n 's/.*"control"[^}]*"socket"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p')
socket=${socket:-/run/bleagent/control.sock}
case "$socket" in /*) ;; *) socket="$(cd "$(dirname "$config")" && pwd)/$socket" ;; esac
export BLEAGENT_SOCKET=$socket
ctl() { "$bin/blectl" "$@"; }

log "starting bleagent --config $config"
"$bin/bleagent" --config "$config" &
agent=$!
stop_agent() { kill -TERM "$agent" 2>/dev/null || true; wait "$agent" 2>/dev/null || true; }
trap 'stop_agent; exit 130' INT TERM
trap 'stop_agent' EXIT

# Wait (bounded) for the control socket to answer.
for _ in $(seq 150); do
    ctl status >/dev/null 2>&1 && break
    kill -0 "$agent" 2>/dev/null || { log "bleagent exited"; exit 1; }
    sleep 0.2
done
ctl status

role=$(ctl --json status | sed -n 's/.*"role":"\([a-z]*\)".*/\1/p')
plugin=$(ctl --json status | sed -n 's/.*"plugin":"\([A-Za-z]*\)".*/\1/p')
status=0
if [ "$role" = central ] && [ "$plugin" = PaymentTerminalScanner ]; then
    log "waiting for the scanner to select and connect to the nearest terminal"
    for _ in $(seq 150); do
        ctl --json call pos.terminals 2>/dev/null | grep -q '"selected":true[^}]*"terminalId":"' && break
        sleep 0.2
    done
    ctl call pos.terminals
    log "a payment: 12.50 EUR"
    ctl call pos.pay '{"amount":1250,"currency":"EUR","reference":"run.sh demo"}' || status=1
    log "the journal's newest three payments"
    ctl call pos.transactions '{"limit":3}' 
fi

cat >&2 <<TXT
==> bleagent is running (pid $agent). Beside it, for example:
      BLEAGENT_SOCKET=$socket $bin/blectl status
      BLEAGENT_SOCKET=$socket $bin/blectl events
      BLEAGENT_SOCKET=$socket $bin/blectl call pos.pay '{"amount":500,"currency":"EUR","reference":"me"}'
TXT
if [ -n "$duration" ]; then
    log "stopping after $duration s (--duration)"
    timeout "$duration" "$bin/blectl" events || true
else
    log "events follow; Ctrl-C stops the agent"
    ctl events || true
fi
exit "$status"
