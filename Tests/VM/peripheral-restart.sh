#!/bin/bash
# VM payload: bluetoothd restarted under a running bleprobe-peripheral. The
# probe (PeripheralManager over BlueZPeripheralBackend) must see bluetoothd
# leave and return (NameOwnerChanged) and register its GATT application and
# advertisement again with the new daemon, by itself; then the python3-dbus
# central (peripheral-central.py) runs its whole check against it.
# Run: /work/shared/bluez-vm/run Tests/VM/peripheral-restart.sh 300
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. /work/shared/bluez-vm/bluez-up.sh
. "$HERE/peripheral-lib.sh"
PY=/usr/bin/python3
bluez_up_any
probe_start
echo "ActiveInstances before the restart: $(active_instances)"
kill -TERM "$BLUEZ_BLUETOOTHD_PID"
wait "$BLUEZ_BLUETOOTHD_PID" || true
bluez_mark bluetoothd-stopped
bluez_start_bluetoothd
bluez_wait 120 "bluetoothd back with the adapters" sh -c "dbus-send --system --print-reply --dest=org.bluez / org.freedesktop.DBus.ObjectManager.GetManagedObjects 2>/dev/null | grep -q '/org/bluez/$CENTRAL_HCI\"\$'"
bluez_mark bluetoothd-restarted
# bluetoothd powered the adapters off as it exited; power ours on as an operator would.
busctl set-property org.bluez "/org/bluez/$PERIPHERAL_HCI" org.bluez.Adapter1 Powered b true || true
bluez_wait 60 "the advertisement registered again" sh -c "[ \"\$(busctl get-property org.bluez /org/bluez/$PERIPHERAL_HCI org.bluez.LEAdvertisingManager1 ActiveInstances 2>/dev/null)\" = 'y 1' ]"
bluez_mark re-registered
grep -q "Registering application" /lab-out/bluetoothd.log || true
set +e
timeout 120 $PY -u "$HERE/peripheral-central.py" --adapter "$CENTRAL_HCI" --timeout 90 2>&1 | tee /lab-out/central.log
rc=${PIPESTATUS[0]}
set -e
bluez_mark central-done
exec 3>&-
wait "$PROBE_PID" || rc=1
echo "--- probe log"; cat /lab-out/probe.log
echo "ActiveInstances after the probe stopped: $(active_instances)"
echo "payload rc=$rc"
exit "$rc"
