#!/bin/bash
# VM payload: CentralManager over BlueZCentralBackend (bleprobe-central) on hci1
# against the real bluetoothd 5.66 and BlueZ's unmodified example-gatt-server +
# example-advertisement on hci0, in one boot:
#  1. two GATT runs, notifications through StartNotify then AcquireNotify: scan,
#     connect, discover, read Battery Level 0x2A19, 3 Heart Rate Measurement
#     0x2A37 notifications, Heart Rate Control Point 0x2A39 writes (01 accepted,
#     02 refused), a write without response, the test service's characteristic
#     and descriptors written and read, disconnect;
#  2. bluetoothd killed and started again during a scan: the manager goes
#     resetting -> poweredOn and resumes the scan by itself (the example
#     advertiser is restarted too: BlueZ's example does not re-register).
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
ADV_PID=$!
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

# 2. bluetoothd restart during a scan
"$PROBE" --restart-scan --adapter hci1 --timeout 90 > /lab-out/central-restart.log 2>&1 &
PROBE_PID=$!
bluez_wait 40 "probe scanning" grep -q RESTART-ME /lab-out/central-restart.log
kill "$ADV_PID" 2>/dev/null || true
kill "$BLUEZ_BLUETOOTHD_PID"
wait "$BLUEZ_BLUETOOTHD_PID" 2>/dev/null || true
bluez_mark bluetoothd-killed
/usr/libexec/bluetooth/bluetoothd -n >> /lab-out/bluetoothd.log 2>&1 & BLUEZ_PIDS+=($!)
BLUEZ_BLUETOOTHD_PID=$!
two_adapters() { [ "$(bluez_adapter_count)" -ge 2 ]; }
bluez_wait 30 "bluetoothd back with 2 adapters" two_adapters
$PY -u "$EX/example-advertisement" > /lab-out/advertisement-2.log 2>&1 & BLUEZ_PIDS+=($!)
set +e
wait "$PROBE_PID"
r=$?
set -e
cat /lab-out/central-restart.log
bluez_mark "central-restart-done rc=$r"
[ "$r" -eq 0 ] || rc=$r
exit "$rc"
