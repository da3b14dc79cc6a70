# Shared by the peripheral-*.sh VM payloads (source it after bluez-up.sh).
#
# Under a loaded host (TCG emulation) the kernel's HCI Reset to the first
# btvirt controller can time out (-110) and that adapter never appears; so
# start one controller more than needed and use the first two that come up:
# PERIPHERAL_HCI and CENTRAL_HCI. LAB_MONITOR=1 records dbus-monitor,
# LAB_BLUEZ_DEBUG=1 runs bluetoothd -d.
bluez_start_bluetoothd() {   # bluez_start_bluetoothd [ARGS...]: extra bluetoothd arguments, such as -E
    local dbg=(); [ "${LAB_BLUEZ_DEBUG:-0}" = 1 ] && dbg=(-d)
    /usr/libexec/bluetooth/bluetoothd -n "${dbg[@]}" "$@" >> /lab-out/bluetoothd.log 2>&1 3>&- & BLUEZ_PIDS+=($!)
    BLUEZ_BLUETOOTHD_PID=$!
}
bluez_adapters() {
    dbus-send --system --print-reply --dest=org.bluez / org.freedesktop.DBus.ObjectManager.GetManagedObjects 2>/dev/null |
        grep -o 'object path "/org/bluez/hci[0-9]*"$' | grep -o 'hci[0-9]*' | sort -u | tr '\n' ' ' || true
}
bluez_up_any() {   # bluez_up_any [ARGS...]: ARGS go to bluetoothd (such as -E)
    mkdir -p /run/dbus
    dbus-daemon --system --nofork --nopidfile > /lab-out/dbus.log 2>&1 & BLUEZ_PIDS+=($!)
    bluez_wait 60 "system bus" test -S /run/dbus/system_bus_socket || return 1
    btvirt -l3 > /lab-out/btvirt.log 2>&1 & BLUEZ_PIDS+=($!)
    bluez_wait 60 "controllers" test -e /sys/class/bluetooth/hci2 || return 1
    if [ "${LAB_MONITOR:-0}" = 1 ]; then dbus-monitor --system > /lab-out/dbus-monitor.log 2>&1 & BLUEZ_PIDS+=($!); fi
    bluez_start_bluetoothd "$@"
    local found="" i
    for i in $(seq 1 600); do
        found=$(bluez_adapters)
        [ "$(echo $found | wc -w)" -ge 2 ] && break
        sleep 0.2
    done
    set -- $found
    PERIPHERAL_HCI=${1:-}; CENTRAL_HCI=${2:-}
    [ -n "$CENTRAL_HCI" ] || { echo "TIMEOUT: fewer than 2 adapters ($found)"; return 1; }
    echo "adapters: $found -> peripheral $PERIPHERAL_HCI, central $CENTRAL_HCI"
    bluez_mark bluez-ready
}
# Starts bleprobe-peripheral on PERIPHERAL_HCI with its stdin on fd 3 (close fd 3 to stop it).
probe_start() {
    rm -f /tmp/probe-stdin; mkfifo /tmp/probe-stdin
    "$ROOT/.build/debug/bleprobe-peripheral" --adapter "$PERIPHERAL_HCI" --name bleprobe \
        < /tmp/probe-stdin > /lab-out/probe.log 2>&1 & PROBE_PID=$!
    BLUEZ_PIDS+=($PROBE_PID)
    exec 3>/tmp/probe-stdin
    bluez_wait 60 "probe advertising" grep -q 'PROBE advertising' /lab-out/probe.log
    bluez_mark peripheral-ready
}
active_instances() {
    busctl get-property org.bluez "/org/bluez/$PERIPHERAL_HCI" org.bluez.LEAdvertisingManager1 ActiveInstances 2>&1 || true
}
