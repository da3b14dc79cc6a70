#!/bin/bash
# VM payload: a passive scan with RSSI thresholds (CentralManager's advertisement monitor,
# bleprobe-central --monitor-rssi) on CENTRAL_HCI against the real bluetoothd 5.66 run with -E,
# and BlueZ's unmodified example-advertisement on PERIPHERAL_HCI (peripheral-lib.sh picks both).
#
# btvirt's controllers send an advertising report only when advertising or scanning is enabled,
# never again while both stay on (emulator/btdev.c), and bluetoothd's adv_monitor_filter_rssi
# needs reports spread over the high timeout before DeviceFound. So while the payload wants the
# device heard, it makes CENTRAL_HCI rescan about once a second: a StartDiscovery from dbus-send, whose
# session bluetoothd ends when dbus-send leaves; each start and stop re-enables scanning.
#  1. the monitor (manufacturer data 0xFFFF, high -60 dBm for 3 s, low -90 dBm for 3 s) is
#     activated; heard for 3 s, the device is found (DeviceFound): btvirt reports RSSI 127,
#     which adv_monitor_filter_rssi compares as a number, above any high threshold;
#  2. the advertiser stops and nothing rescans: unheard for the low timeout, the device is lost
#     (DeviceLost);
#  3. it advertises and is heard again: found again (DeviceFound) and reported.
# blesim does the same (Tests/BlueZCentralTests/PassiveScanOverBlesimTests.swift, "goes silent").
# LAB_GUEST_ENV=LAB_BLUEZ_DEBUG=1 runs bluetoothd -d.
# Needs `swift build --product bleprobe-central` on the host first.
# Run: scripts/vm-test.sh Tests/VM/central-monitor-rssi.sh
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VMDIR=${BLUEZ_VM_DIR:-$ROOT/../shared/bluez-vm}
[ -f "$VMDIR/bluez-up.sh" ] || VMDIR=/work/shared/bluez-vm
. "$VMDIR/bluez-up.sh"
. "$HERE/peripheral-lib.sh"
PROBE=$ROOT/.build/debug/bleprobe-central
[ -x "$PROBE" ] || { echo "no $PROBE: build it on the host first"; exit 3; }
EX=/usr/share/doc/bluez-test-scripts/examples
PY=/usr/bin/python3
# three controllers, the first two that come up (peripheral-lib.sh); AdvertisementMonitorManager1
# is experimental in 5.66: bluetoothd -E (LAB_BLUEZ_DEBUG=1 adds -d)
bluez_up_any -E

advertise() {   # advertise N: example-advertisement on the first adapter (PERIPHERAL_HCI), until registered
    $PY -u "$EX/example-advertisement" > "/lab-out/advertisement-$1.log" 2>&1 & BLUEZ_PIDS+=($!)
    ADV_PID=$!
    bluez_wait 30 "advertisement $1" grep -q 'Advertisement registered' "/lab-out/advertisement-$1.log"
}
rescan() {   # CENTRAL_HCI scans again about once a second until killed
    while true; do
        dbus-send --system --print-reply --dest=org.bluez "/org/bluez/$CENTRAL_HCI" org.bluez.Adapter1.StartDiscovery \
            > /dev/null 2>&1 || true
        sleep 1
    done
}
advertise 1
"$PROBE" --monitor-rssi --adapter "$CENTRAL_HCI" --timeout 200 > /lab-out/central-monitor.log 2>&1 &
PROBE_PID=$!
probe_failed() { cat /lab-out/central-monitor.log; exit 1; }
bluez_wait 60 "monitor active" grep -q 'scan mode' /lab-out/central-monitor.log || probe_failed
rescan & RESCAN_PID=$!; BLUEZ_PIDS+=($RESCAN_PID)
bluez_wait 90 "device found" grep -q SILENCE-ME /lab-out/central-monitor.log || probe_failed
kill "$RESCAN_PID" "$ADV_PID" 2>/dev/null || true
wait "$RESCAN_PID" "$ADV_PID" 2>/dev/null || true
bluez_mark advertiser-stopped
bluez_wait 60 "device lost" grep -q ADVERTISE-AGAIN /lab-out/central-monitor.log || probe_failed
advertise 2
rescan & RESCAN_PID=$!; BLUEZ_PIDS+=($RESCAN_PID)
set +e
wait "$PROBE_PID"
rc=$?
set -e
cat /lab-out/central-monitor.log
bluez_mark "central-monitor-done rc=$rc"
exit "$rc"
