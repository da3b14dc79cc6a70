#!/usr/bin/env bash
# The main job, on the embedded default: sets up a fresh Debian 12 machine,
# builds, and runs bleagent with the shipped roles.json. With backend "sim" the
# agent starts its own private bus and blesim; in the central role the
# payment-terminal scanner finds the nearest virtual terminal, connects, and
# this script sends it a payment. The agent then keeps running with blectl
# usable beside it, until Ctrl-C.
#
# Usage: scripts/run.sh [--config FILE] [--duration SECONDS]
#   --config FILE  another config, such as docs/examples/sensor-gateway/roles.json
#                  (the sensor gateway on a simulated floor of ~400 sensors and beacons:
#                  the script shows its devices and counters)
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
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 64 ;;
    esac
done

ensure_setup
log "build"
swift build

bin="$PWD/.build/debug"
"$bin/bleagent" --config "$config" --check-config
# A config may ship the BTHome bind keys of its simulated sensors beside it (docs/examples/sensor-gateway).
# Git checks files out readable by all, and the sensor gateway refuses a key file that others may read, so
# they are installed with mode 0600 into the gateway's state directory, where the config's "keyFile" names them.
if [ -f "$(dirname "$config")/bthome-keys" ]; then
    state=$(tr -d '\n' <"$config" | sed -n 's/.*"stateDirectory"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p')
    case "$state" in /*) ;; *) state="$(cd "$(dirname "$config")" && pwd)/$state" ;; esac
    install -d -m 700 "$state/plugins" "$state/plugins/SensorGateway"
    install -m 600 "$(dirname "$config")/bthome-keys" "$state/plugins/SensorGateway/bthome-keys"
fi
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
follow=(events)
example="call pos.pay '{\"amount\":500,\"currency\":\"EUR\",\"reference\":\"me\"}'"
if [ "$role" = central ] && [ "$plugin" = SensorGateway ]; then
    log "the sensor gateway: waiting for the first hundred readings"
    for _ in $(seq 150); do
        [ "$(ctl --json gateway stats 2>/dev/null | sed -n 's/.*"decoded":\([0-9]*\).*/\1/p')" -ge 100 ] 2>/dev/null && break
        sleep 0.2
    done
    log "the 15 strongest devices (blectl gateway devices; * encrypted BTHome, decrypted with the key file)"
    ctl gateway devices --sort rssi --limit 15
    ctl gateway stats
    follow=(gateway readings)
    example="gateway device 3C:2E:F5:00:00:01"
fi

cat >&2 <<TXT
==> bleagent is running (pid $agent). Beside it, for example:
      BLEAGENT_SOCKET=$socket $bin/blectl status
      BLEAGENT_SOCKET=$socket $bin/blectl events
      BLEAGENT_SOCKET=$socket $bin/blectl $example
TXT
if [ -n "$duration" ]; then
    log "stopping after $duration s (--duration)"
    timeout "$duration" "$bin/blectl" "${follow[@]}" || true
else
    log "${follow[*]} follow; Ctrl-C stops the agent"
    ctl "${follow[@]}" || true
fi
exit "$status"
