#!/bin/bash
# VM payload: CentralManager over BlueZCentralBackend (bleprobe-central) on hci1
# against the real bluetoothd 5.66 and BlueZ's unmodified example-gatt-server +
# example-advertisement on hci0. Two runs in one boot: notifications through
# StartNotify, then through AcquireNotify. Each run scans, connects, discovers,
# reads Battery Level 0x2A19, receives 3 Heart Rate Measurement 0x2A37
# notifications, writes the Heart Rate Control Point 0x2A39 (01 accepted, 02
# refused), tries a write without response, writes/reads the test service's
# characteristic and descriptors, and disconnects.
# Needs `swift build --product bleprobe-central` on the host first.
# Run: scripts/vm-test.sh Tests/VM/central-example-gatt-server.sh
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VMDIR=${BLUEZ_VM_DIR:-$ROOT/../shared/bluez-vm}
[ -f "$VMDIR/bluez-up.sh" ] || VMDIR=/work/shared/bluez-vm
. "$VMDIR/bluez-up.sh"
PROBE=$ROOT/.build/debug/bleprobe-central
[ -x "$PROBE" ] || { echo "no $PROBE: build it on the host first"; exit 3; }
EX=/usr/share/doc/bluez-test-scripts/examples
PY=/usr/bin/python3
bluez_up
$PY -u "$EX/example-gatt-server" > /lab-out/gatt-server.log 2>&1 & BLUEZ_PIDS+=($!)
$PY -u "$EX/example-advertisement" > /lab-out/advertisement.log 2>&1 & BLUEZ_PIDS+=($!)
bluez_wait 30 "GATT application" grep -q 'GATT application registered' /lab-out/gatt-server.log
bluez_wait 30 "advertisement" grep -q 'Advertisement registered' /lab-out/advertisement.log
bluez_mark peripheral-ready
rc=0
for mode in start acquire; do
    set +e
    timeout 100 "$PROBE" --adapter hci1 --notify "$mode" --timeout 90 2>&1 | tee "/lab-out/central-$mode.log"
    r=${PIPESTATUS[0]}
    set -e
    bluez_mark "central-$mode-done rc=$r"
    [ "$r" -eq 0 ] || rc=$r
done
exit "$rc"
