#!/bin/bash
# VM payload: bleprobe-peripheral (PeripheralManager over BlueZPeripheralBackend)
# on hci0 against the real bluetoothd 5.66, and a python3-dbus central on hci1
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
PY=/usr/bin/python3
PROBE="$ROOT/.build/debug/bleprobe-peripheral"
bluez_up
mkfifo /tmp/probe-stdin
"$PROBE" --adapter hci0 --name bleprobe < /tmp/probe-stdin > /lab-out/probe.log 2>&1 & PROBE_PID=$!
BLUEZ_PIDS+=($PROBE_PID)
exec 3>/tmp/probe-stdin           # hold the probe's stdin open until we close fd 3
bluez_wait 60 "probe advertising" grep -q 'PROBE advertising' /lab-out/probe.log
bluez_mark peripheral-ready
set +e
timeout 120 $PY -u "$HERE/peripheral-central.py" --adapter hci1 --timeout 90 2>&1 | tee /lab-out/central.log
rc=${PIPESTATUS[0]}
set -e
bluez_mark central-done
active_before=$(busctl get-property org.bluez /org/bluez/hci0 org.bluez.LEAdvertisingManager1 ActiveInstances 2>&1 || true)
exec 3>&-                          # close stdin: the probe stops
wait $PROBE_PID || rc=1
active_after=$(busctl get-property org.bluez /org/bluez/hci0 org.bluez.LEAdvertisingManager1 ActiveInstances 2>&1 || true)
echo "--- probe log"; cat /lab-out/probe.log
echo "ActiveInstances while running: $active_before; after the probe stopped: $active_after"
grep -q 'PROBE write 12345678-1234-5678-1234-56789abcabc1 value "ping"' /lab-out/probe.log || { echo "FAIL: the write was not logged"; rc=1; }
[ "$active_after" = "y 0" ] || { echo "FAIL: advertisement still active"; rc=1; }
echo "payload rc=$rc"
exit "$rc"
