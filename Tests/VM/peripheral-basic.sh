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
# Under a loaded host (TCG emulation) the kernel's HCI Reset to the first
# btvirt controller can time out (-110) and that adapter never appears; so
# start one controller more than needed and use the first two that come up.
bluez_up_any() {
    mkdir -p /run/dbus
    dbus-daemon --system --nofork --nopidfile > /lab-out/dbus.log 2>&1 & BLUEZ_PIDS+=($!)
    bluez_wait 60 "system bus" test -S /run/dbus/system_bus_socket || return 1
    btvirt -l3 > /lab-out/btvirt.log 2>&1 & BLUEZ_PIDS+=($!)
    bluez_wait 60 "controllers" test -e /sys/class/bluetooth/hci2 || return 1
    [ "${LAB_MONITOR:-0}" = 1 ] && { dbus-monitor --system > /lab-out/dbus-monitor.log 2>&1 & BLUEZ_PIDS+=($!); }
    local dbg=(); [ "${LAB_BLUEZ_DEBUG:-0}" = 1 ] && dbg=(-d)
    /usr/libexec/bluetooth/bluetoothd -n "${dbg[@]}" > /lab-out/bluetoothd.log 2>&1 & BLUEZ_PIDS+=($!)
    local found=0 i
    for i in $(seq 1 600); do
        found=$(dbus-send --system --print-reply --dest=org.bluez / org.freedesktop.DBus.ObjectManager.GetManagedObjects 2>/dev/null |
            grep -o 'object path "/org/bluez/hci[0-9]*"$' | grep -o 'hci[0-9]*' | sort -u | tr '\n' ' ' || true)
        [ "$(echo $found | wc -w)" -ge 2 ] && break
        sleep 0.2
    done
    set -- $found
    PERIPHERAL_HCI=$1; CENTRAL_HCI=$2
    [ -n "${CENTRAL_HCI:-}" ] || { echo "TIMEOUT: fewer than 2 adapters ($found)"; return 1; }
    echo "adapters: $found -> peripheral $PERIPHERAL_HCI, central $CENTRAL_HCI"
    bluez_mark bluez-ready
}
PY=/usr/bin/python3
PROBE="$ROOT/.build/debug/bleprobe-peripheral"
bluez_up_any
mkfifo /tmp/probe-stdin
"$PROBE" --adapter "$PERIPHERAL_HCI" --name bleprobe < /tmp/probe-stdin > /lab-out/probe.log 2>&1 & PROBE_PID=$!
BLUEZ_PIDS+=($PROBE_PID)
exec 3>/tmp/probe-stdin           # hold the probe's stdin open until we close fd 3
bluez_wait 60 "probe advertising" grep -q 'PROBE advertising' /lab-out/probe.log
bluez_mark peripheral-ready
set +e
timeout 120 $PY -u "$HERE/peripheral-central.py" --adapter "$CENTRAL_HCI" --timeout 90 2>&1 | tee /lab-out/central.log
rc=${PIPESTATUS[0]}
set -e
bluez_mark central-done
active_before=$(busctl get-property org.bluez /org/bluez/$PERIPHERAL_HCI org.bluez.LEAdvertisingManager1 ActiveInstances 2>&1 || true)
exec 3>&-                          # close stdin: the probe stops
wait $PROBE_PID || rc=1
active_after=$(busctl get-property org.bluez /org/bluez/$PERIPHERAL_HCI org.bluez.LEAdvertisingManager1 ActiveInstances 2>&1 || true)
echo "--- probe log"; cat /lab-out/probe.log
echo "ActiveInstances while running: $active_before; after the probe stopped: $active_after"
grep -q 'PROBE write 12345678-1234-5678-1234-56789abcabc1 value "ping"' /lab-out/probe.log || { echo "FAIL: the write was not logged"; rc=1; }
[ "$active_after" = "y 0" ] || { echo "FAIL: advertisement still active"; rc=1; }
echo "payload rc=$rc"
exit "$rc"
