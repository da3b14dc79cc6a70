#!/bin/bash
# VM payload: what a BlueZ central (hci1) sees of the real bluetoothd 5.66's
# GATT database on hci0 when BlueZ's unmodified example-gatt-server is
# registered there (bluetoothd adds its own GAP, GATT and Device Information
# services from src/gatt-database.c). gatt-database-dump.py connects from hci1
# and prints every GattService1 / GattCharacteristic1 / GattDescriptor1 with
# UUID, flags and the value read; btmon's decoded ATT exchange is kept too
# (the central's discovery, including the GAP service BlueZ hides from D-Bus).
# Output: /lab-out/gatt-database-dump.txt (the fixture
# Tests/VM/fixtures/gatt-database-example-gatt-server.txt is a copy of it),
# /lab-out/btmon.txt.
# Run: scripts/vm-test.sh Tests/VM/gatt-database-dump.sh
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VMDIR=${BLUEZ_VM_DIR:-$ROOT/../shared/bluez-vm}
[ -f "$VMDIR/bluez-up.sh" ] || VMDIR=/work/shared/bluez-vm
. "$VMDIR/bluez-up.sh"
EX=/usr/share/doc/bluez-test-scripts/examples
PY=/usr/bin/python3
BLUEZ_BTMON=1 bluez_up
$PY -u "$EX/example-gatt-server" > /lab-out/gatt-server.log 2>&1 & BLUEZ_PIDS+=($!)
$PY -u "$EX/example-advertisement" > /lab-out/advertisement.log 2>&1 & BLUEZ_PIDS+=($!)
bluez_wait 30 "GATT application" grep -q 'GATT application registered' /lab-out/gatt-server.log
bluez_wait 30 "advertisement" grep -q 'Advertisement registered' /lab-out/advertisement.log
bluez_mark peripheral-ready
set +e
timeout 150 $PY -u "$HERE/gatt-database-dump.py" --central hci1 --peripheral hci0 --timeout 140 \
    > /lab-out/gatt-database-dump.txt 2> /lab-out/dump-stderr.log
rc=$?
set -e
bluez_mark "dump-done rc=$rc"
cat /lab-out/dump-stderr.log /lab-out/gatt-database-dump.txt
sleep 2
btmon -r /lab-out/hci.btsnoop > /lab-out/btmon.txt 2>&1 || true
exit "$rc"
