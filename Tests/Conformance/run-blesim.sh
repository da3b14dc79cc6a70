#!/bin/bash
# Record the conformance probe against blesim on a private dbus-daemon (no root),
# then compare with the real-daemon fixture.
#   Tests/Conformance/run-blesim.sh [BLESIM_BINARY] [OUT_JSON]
# BLESIM_ARGS: extra blesim options (e.g. --scenario FILE; default: its own default,
# sim/scenarios/default.json relative to the project root, where it is started).
# Exit status: compare.py's (0: same behaviour, 1: differences, 2: usage).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BLESIM=${1:-$ROOT/.build/debug/blesim}
OUT=${2:-$(mktemp -d)/blesim.json}
[ -x "$BLESIM" ] || { echo "no blesim binary at $BLESIM (swift build --product blesim)" >&2; exit 2; }
WORK=$(mktemp -d)
PIDS=()
cleanup() { local p; for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
cat > "$WORK/bus.conf" <<CONF
<busconfig>
  <type>system</type>
  <listen>unix:path=$WORK/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>
CONF
exec 4< <(exec dbus-daemon --config-file="$WORK/bus.conf" --nofork --print-address=1)
PIDS+=($!)
read -r -t 20 ADDR <&4 || { echo "dbus-daemon did not start" >&2; exit 2; }
(cd "$ROOT" && exec "$BLESIM" --address "$ADDR" --adapters 2 ${BLESIM_ARGS:-}) > "$WORK/blesim.log" 2>&1 &
PIDS+=($!)
# wait until org.bluez has an owner (bounded)
owned() { dbus-send --bus="$ADDR" --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.NameHasOwner \
        string:org.bluez 2>/dev/null | grep -q true; }
for _ in $(seq 200); do owned && break; sleep 0.05; done
owned || { echo "blesim did not take org.bluez:" >&2; cat "$WORK/blesim.log" >&2; exit 2; }
set +e
timeout 120 /usr/bin/python3 -u "$HERE/probe.py" --bus "$ADDR" --adapter hci1 --out "$OUT"
prc=$?
set -e
echo "probe exit $prc; recording: $OUT" >&2
[ "$prc" -le 1 ] || { sed 's/^/blesim: /' "$WORK/blesim.log" >&2; exit 2; }
/usr/bin/python3 "$HERE/compare.py" "$HERE/bluez-5.66.json" "$OUT"
