#!/bin/bash
# VM payload: bleprobe-peripheral (PeripheralManager over BlueZPeripheralBackend)
# on the first adapter against the real bluetoothd 5.66, and a python3-dbus central on the second
# (Tests/VM/peripheral-central.py): it finds the advertisement (name + Battery
# UUID), connects, reads Battery Level, receives three notifications, writes a
# value the peripheral logs and echoes, and reads the characteristic that
# answers ATT application error 0x80. Then the probe is stopped through its
# stdin and must unregister the advertisement (ActiveInstances back to 0).
# Run: /work/shared/bluez-vm/run Tests/VM/peripheral-basic.sh 240
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. /work/shared/bluez-vm/bluez-up.sh
. "$HERE/peripheral-lib.sh"
PY=/usr/bin/python3
bluez_up_any
probe_start
set +e
timeout 120 $PY -u "$HERE/peripheral-central.py" --adapter "$CENTRAL_HCI" --timeout 90 2>&1 | tee /lab-out/central.log
rc=${PIPESTATUS[0]}
set -e
bluez_mark central-done
active_before=$(active_instances)
exec 3>&-                          # close stdin: the probe stops
wait "$PROBE_PID" || rc=1
active_after=$(active_instances)
echo "--- probe log"; cat /lab-out/probe.log
echo "ActiveInstances while running: $active_before; after the probe stopped: $active_after"
grep -q 'PROBE write 12345678-1234-5678-1234-56789abcabc1 value "ping"' /lab-out/probe.log || { echo "FAIL: the write was not logged"; rc=1; }
[ "$active_after" = "y 0" ] || { echo "FAIL: advertisement still active"; rc=1; }
echo "payload rc=$rc"
exit "$rc"
