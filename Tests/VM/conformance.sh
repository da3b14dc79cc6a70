#!/bin/bash
# VM payload: record the conformance probe against the real bluetoothd 5.66.
#   hci0: BlueZ's unmodified example-advertisement (connectable, LocalName,
#         service UUIDs 180D/180F, manufacturer and service data)
#   hci1: the adapter under test (the probe powers it, discovers, connects)
#   hci2: a non-connectable advertiser set up through btmgmt (add-adv without -c)
# Writes /lab-out/bluez.json (the run's output folder on the host).
# Run: scripts/vm-test.sh Tests/VM/conformance.sh   (see docs/conformance.md)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VMDIR=${BLUEZ_VM_DIR:-$ROOT/../shared/bluez-vm}
[ -f "$VMDIR/bluez-up.sh" ] || VMDIR=/work/shared/bluez-vm
. "$VMDIR/bluez-up.sh"
EX=/usr/share/doc/bluez-test-scripts/examples
PY=/usr/bin/python3
BLUEZ_CONTROLLERS=3
bluez_up

addr_of() {   # addr_of hciN -> the adapter's Address property
    dbus-send --system --print-reply=literal --dest=org.bluez "/org/bluez/$1" \
        org.freedesktop.DBus.Properties.Get string:org.bluez.Adapter1 string:Address | awk '{print $2}'
}
powered() { dbus-send --system --print-reply=literal --dest=org.bluez "/org/bluez/$1" \
        org.freedesktop.DBus.Properties.Get string:org.bluez.Adapter1 string:Powered | grep -q true; }
for h in hci0 hci2; do
    dbus-send --system --print-reply --dest=org.bluez "/org/bluez/$h" org.freedesktop.DBus.Properties.Set \
        string:org.bluez.Adapter1 string:Powered variant:boolean:true > /dev/null
    bluez_wait 20 "$h powered" powered "$h"
done
PEER=$(addr_of hci0)
echo "peer (connectable, hci0): $PEER; non-connectable: hci2, named NC (random address)"

$PY -u "$EX/example-advertisement" > /lab-out/advertisement.log 2>&1 & BLUEZ_PIDS+=($!)
bluez_wait 30 "advertisement" grep -q 'Advertisement registered' /lab-out/advertisement.log
# AD: flags 0x06 (general discoverable, no BR/EDR), complete local name "NC"
btmgmt --index 2 add-adv -d 02010603094e43 1 2>&1 | tee /lab-out/btmgmt.log
bluez_mark advertisers-ready

set +e
timeout 150 $PY -u "$ROOT/Tests/Conformance/probe.py" --adapter hci1 --peer-address "$PEER" \
    --nonconn-name NC --connect --out /lab-out/bluez.json 2>&1 | tee /lab-out/probe.log
rc=${PIPESTATUS[0]}
set -e
bluez_mark probe-done
exit "$rc"
