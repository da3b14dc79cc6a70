#!/usr/bin/python3
"""A remote central for Tests/VM/peripheral-basic.sh (python3-dbus, talks to
bluetoothd on its own adapter, knows nothing of bleagent's code).

Scans on --adapter (hci1) until a device advertises --name with the Battery
service UUID, connects, waits for ServicesResolved, then checks:
  read Battery Level == 100; notify on, write "notify" to the echo
  characteristic and receive three notifications 99, 98, 97;
  write "ping" to the echo characteristic and read it back;
  read the failing characteristic -> error (ATT 0x80 surfaces as
  org.bluez.Error.Failed "Operation failed with ATT error: 0x80").
Prints CENTRAL lines; exit 0 on success, 1 on failure, 2 on timeout.
"""
import argparse
import sys
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

BLUEZ = 'org.bluez'
OM = 'org.freedesktop.DBus.ObjectManager'
PROPS = 'org.freedesktop.DBus.Properties'
BATTERY = '0000180f-0000-1000-8000-00805f9b34fb'
LEVEL = '00002a19-0000-1000-8000-00805f9b34fb'
ECHO = '12345678-1234-5678-1234-56789abcabc1'
FAILING = '12345678-1234-5678-1234-56789abcabc2'
T0 = time.monotonic()


def log(*parts):
    print('CENTRAL %6.2fs' % (time.monotonic() - T0), *parts, flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--adapter', default='hci1')
    parser.add_argument('--name', default='bleprobe')
    parser.add_argument('--timeout', type=float, default=60)
    args = parser.parse_args()

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    loop = GLib.MainLoop()
    adapter_path = '/org/bluez/' + args.adapter
    manager = dbus.Interface(bus.get_object(BLUEZ, '/'), OM)
    adapter = bus.get_object(BLUEZ, adapter_path)
    dbus.Interface(adapter, PROPS).Set('org.bluez.Adapter1', 'Powered', dbus.Boolean(True))

    state = {'device': None, 'notifications': [], 'failed': None}

    def objects():
        return manager.GetManagedObjects()

    def find_device():
        for path, ifaces in objects().items():
            dev = ifaces.get('org.bluez.Device1')
            if dev and path.startswith(adapter_path + '/') and dev.get('Name') == args.name \
                    and BATTERY in [str(u) for u in dev.get('UUIDs', [])]:
                return path
        return None

    def wait_until(predicate, what):
        """Runs the main loop until predicate() holds; checked on each bluez signal."""
        if predicate():
            return
        result = {'done': False}

        def check(*_a, **_k):
            if not result['done'] and predicate():
                result['done'] = True
                loop.quit()
            return False

        receivers = [
            bus.add_signal_receiver(check, dbus_interface=OM, signal_name='InterfacesAdded'),
            bus.add_signal_receiver(check, dbus_interface=PROPS, signal_name='PropertiesChanged'),
        ]
        timer = GLib.timeout_add(int(args.timeout * 1000), lambda: (loop.quit(), False)[1])
        loop.run()
        GLib.source_remove(timer) if not result['done'] else None
        for r in receivers:
            r.remove()
        if not result['done'] and not predicate():
            log('TIMEOUT waiting for', what)
            sys.exit(2)

    adapter_iface = dbus.Interface(adapter, 'org.bluez.Adapter1')
    adapter_iface.SetDiscoveryFilter({'Transport': 'le'})
    adapter_iface.StartDiscovery()
    log('scanning on', args.adapter)

    def found():
        state['device'] = find_device()
        return state['device'] is not None

    def rescan():
        # the emulated air sometimes delivers nothing to a fresh scan: start it again
        try:
            adapter_iface.StopDiscovery()
        except dbus.exceptions.DBusException:
            pass
        adapter_iface.StartDiscovery()
        log('scan restarted')
        return True

    rescan_timer = GLib.timeout_add_seconds(15, rescan)
    wait_until(found, 'the advertisement')
    GLib.source_remove(rescan_timer)
    dev_path = state['device']
    dev_props = objects()[dbus.ObjectPath(dev_path)]['org.bluez.Device1']
    log('found', dev_path, 'name', str(dev_props.get('Name')), 'uuids', [str(u) for u in dev_props['UUIDs']])
    adapter_iface.StopDiscovery()
    device = bus.get_object(BLUEZ, dev_path)
    dbus.Interface(device, 'org.bluez.Device1').Connect(timeout=30)
    log('connected')
    dprops = dbus.Interface(device, PROPS)
    wait_until(lambda: bool(dprops.Get('org.bluez.Device1', 'ServicesResolved')), 'ServicesResolved')
    log('services resolved')

    chars = {}
    for path, ifaces in objects().items():
        c = ifaces.get('org.bluez.GattCharacteristic1')
        if c and path.startswith(dev_path + '/'):
            chars[str(c['UUID'])] = path
            log('characteristic', str(c['UUID']), [str(f) for f in c['Flags']])

    def char(uuid):
        return dbus.Interface(bus.get_object(BLUEZ, chars[uuid]), 'org.bluez.GattCharacteristic1')

    ok = True
    level = bytes(char(LEVEL).ReadValue({}))
    log('battery level read', list(level))
    ok &= level == bytes([100])

    def on_changed(iface, changed, invalidated, path=None):
        if iface == 'org.bluez.GattCharacteristic1' and 'Value' in changed and path == chars[LEVEL]:
            state['notifications'].append(bytes(changed['Value']))
            log('notification', list(bytes(changed['Value'])))

    bus.add_signal_receiver(on_changed, dbus_interface=PROPS, signal_name='PropertiesChanged',
                            path=chars[LEVEL], path_keyword='path')
    char(LEVEL).StartNotify()
    log('notify on')
    # the peripheral notifies when asked through the echo characteristic
    char(ECHO).WriteValue(dbus.Array(b'notify', signature='y'), {'type': 'request'})
    wait_until(lambda: len(state['notifications']) >= 3, 'three notifications')
    ok &= state['notifications'][:3] == [bytes([99]), bytes([98]), bytes([97])]

    char(ECHO).WriteValue(dbus.Array(b'ping', signature='y'), {'type': 'request'})
    echoed = bytes(char(ECHO).ReadValue({}))
    log('echo read back', echoed)
    ok &= echoed == b'ping'

    try:
        char(FAILING).ReadValue({})
        log('FAIL: the failing characteristic answered')
        ok = False
    except dbus.exceptions.DBusException as e:
        log('failing read error', e.get_dbus_name(), e.get_dbus_message())
        ok &= e.get_dbus_name() == 'org.bluez.Error.Failed' and '0x80' in e.get_dbus_message()

    char(LEVEL).StopNotify()
    dbus.Interface(device, 'org.bluez.Device1').Disconnect()
    log('RESULT', 'PASS' if ok else 'FAIL')
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
