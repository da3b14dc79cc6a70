#!/usr/bin/python3
"""Dump what a BlueZ central sees of a BlueZ peripheral's GATT database.

Run in the bluez-vm guest by gatt-database-dump.sh: the central is --central
(hci1), the peripheral is --peripheral (hci0, which has an application
registered and advertises). Scans on the central until the peripheral's
address shows up, connects, waits for ServicesResolved, reads every readable
characteristic and descriptor, and prints one line per GattService1 /
GattCharacteristic1 / GattDescriptor1 object in object-path order:
  <kind> <path relative to the device> uuid=<uuid> [flags=a,b] [primary=..] [value=<hex>|read-error=<name>]
Exit 0 when the dump is complete, 1 on error, 2 on timeout.
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
SVC = 'org.bluez.GattService1'
CHRC = 'org.bluez.GattCharacteristic1'
DESC = 'org.bluez.GattDescriptor1'


def log(*a):
    print('#', *a, file=sys.stderr, flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--central', default='hci1')
    ap.add_argument('--peripheral', default='hci0')
    ap.add_argument('--timeout', type=float, default=120)
    args = ap.parse_args()
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    om = dbus.Interface(bus.get_object(BLUEZ, '/'), OM)
    c_path = '/org/bluez/' + args.central
    p_path = '/org/bluez/' + args.peripheral
    objs = om.GetManagedObjects()
    target = str(objs[p_path]['org.bluez.Adapter1']['Address'])
    dev_path = c_path + '/dev_' + target.replace(':', '_')
    log('peripheral address', target, '-> device', dev_path)
    c_props = dbus.Interface(bus.get_object(BLUEZ, c_path), PROPS)
    c_props.Set('org.bluez.Adapter1', 'Powered', dbus.Boolean(True))
    adapter = dbus.Interface(bus.get_object(BLUEZ, c_path), 'org.bluez.Adapter1')
    adapter.SetDiscoveryFilter({'Transport': dbus.String('le')})
    adapter.StartDiscovery()
    deadline = time.monotonic() + args.timeout
    loop = GLib.MainLoop()
    ctx = loop.get_context()

    def pump(cond, what):
        while not cond():
            if time.monotonic() > deadline:
                log('timeout waiting for', what)
                sys.exit(2)
            ctx.iteration(False)
            time.sleep(0.05)

    pump(lambda: dev_path in om.GetManagedObjects(), 'device')
    adapter.StopDiscovery()
    dev = bus.get_object(BLUEZ, dev_path)
    dprops = dbus.Interface(dev, PROPS)
    dbus.Interface(dev, 'org.bluez.Device1').Connect(timeout=90)
    log('connected')
    pump(lambda: bool(dprops.Get('org.bluez.Device1', 'ServicesResolved')), 'ServicesResolved')
    log('services resolved; UUIDs', [str(x) for x in dprops.Get('org.bluez.Device1', 'UUIDs')])
    objs = om.GetManagedObjects()
    paths = sorted(p for p, i in objs.items() if p.startswith(dev_path + '/') and
                   (SVC in i or CHRC in i or DESC in i))
    for p in paths:
        ifs = objs[p]
        rel = p[len(dev_path) + 1:]
        if SVC in ifs:
            s = ifs[SVC]
            inc = [str(x)[len(dev_path) + 1:] for x in s.get('Includes', [])]
            print('service %s uuid=%s primary=%s includes=%s' % (
                rel, s['UUID'], bool(s['Primary']), ','.join(inc) or '-'))
            continue
        kind, iface = ('characteristic', CHRC) if CHRC in ifs else ('descriptor', DESC)
        props = ifs[iface]
        flags = [str(f) for f in props.get('Flags', [])]
        line = '%s %s uuid=%s flags=%s' % (kind, rel, props['UUID'], ','.join(flags) or '-')
        if 'read' in flags or kind == 'descriptor':
            try:
                v = dbus.Interface(bus.get_object(BLUEZ, p), iface).ReadValue({})
                line += ' value=%s' % (bytes(v).hex() or '-')
            except dbus.exceptions.DBusException as e:
                line += ' read-error=%s' % e.get_dbus_name()
        print(line, flush=True)
    dbus.Interface(dev, 'org.bluez.Device1').Disconnect()
    return 0


if __name__ == '__main__':
    sys.exit(main())
