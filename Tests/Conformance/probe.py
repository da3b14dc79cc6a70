#!/usr/bin/python3
"""Conformance probe: record how a server of org.bluez behaves, as JSON.

Runs a fixed list of small, named checks against one adapter on one bus and
writes what it observed: object tree shape, introspection, property types,
error names and messages, and the order of replies and signals. Values that
legitimately differ between machines (addresses, names, RSSI, device paths)
are normalised so that two recordings can be compared with compare.py.

The same probe runs against the real bluetoothd (Tests/VM/conformance.sh, in
the VM) and against blesim (Tests/Conformance/run-blesim.sh, on a private bus):
wherever the recordings differ, blesim is wrong.

Usage:
  probe.py [--bus ADDRESS] --adapter hci1 [--peer-address AA:..] \
           [--nonconn-address AA:..] --out FILE

python3-dbus + GLib only (Debian's /usr/bin/python3).
"""
import argparse
import json
import re
import sys
import time
import xml.etree.ElementTree as ET

import dbus
import dbus.bus
import dbus.mainloop.glib
from gi.repository import GLib

BLUEZ = 'org.bluez'
OM = 'org.freedesktop.DBus.ObjectManager'
PROPS = 'org.freedesktop.DBus.Properties'
INTRO = 'org.freedesktop.DBus.Introspectable'
ADAPTER = 'org.bluez.Adapter1'
DEVICE = 'org.bluez.Device1'

ADDR_RE = re.compile(r'([0-9A-Fa-f]{2}[:_]){5}[0-9A-Fa-f]{2}')
# values that differ between machines and runs: kept as their type only
VOLATILE = {'Address', 'Name', 'Alias', 'Class', 'Modalias', 'RSSI', 'TxPower',
            'ManufacturerData', 'ServiceData', 'UUIDs', 'Appearance', 'Icon',
            'AdvertisingFlags', 'AdvertisingData'}

T0 = time.monotonic()


def log(*a):
    print('[probe +%6.2fs]' % (time.monotonic() - T0), *a, file=sys.stderr, flush=True)


def sig_of(v):
    """D-Bus signature of a value as dbus-python unmarshalled it."""
    table = [(dbus.Boolean, 'b'), (dbus.Byte, 'y'), (dbus.Int16, 'n'), (dbus.UInt16, 'q'),
             (dbus.Int32, 'i'), (dbus.UInt32, 'u'), (dbus.Int64, 'x'), (dbus.UInt64, 't'),
             (dbus.Double, 'd'), (dbus.ObjectPath, 'o'), (dbus.Signature, 'g'),
             (dbus.String, 's'), (dbus.types.UnixFd, 'h')]
    for t, s in table:
        if isinstance(v, t):
            return s
    if isinstance(v, dbus.Dictionary):
        return 'a{%s}' % v.signature if v.signature else 'a{??}'
    if isinstance(v, dbus.Array):
        return 'a' + (v.signature or '?')
    if isinstance(v, dbus.Struct):
        return '(' + (v.signature or '') + ')'
    return type(v).__name__


def norm_str(s):
    return ADDR_RE.sub(lambda m: m.group(1)[-1].join(['XX'] * 6), str(s))


def plain(v):
    """dbus value -> JSON-able python, paths and addresses normalised."""
    if isinstance(v, dbus.Dictionary):
        return {norm_str(k): plain(x) for k, x in v.items()}
    if isinstance(v, dbus.Array):
        if v.signature == 'y':
            return bytes(v).hex()
        return [plain(x) for x in v]
    if isinstance(v, dbus.Struct):
        return [plain(x) for x in v]
    if isinstance(v, dbus.Boolean):
        return bool(v)
    if isinstance(v, (dbus.String, dbus.ObjectPath, dbus.Signature)):
        return norm_str(v)
    if isinstance(v, (int, float)):
        return v if not isinstance(v, bool) else bool(v)
    return str(v)


def prop_record(name, v):
    """{type, value} for a property; value omitted for volatile ones."""
    r = {'type': sig_of(v)}
    if name not in VOLATILE:
        r['value'] = plain(v)
    return r


def props_record(d):
    return {str(k): prop_record(str(k), v) for k, v in sorted(d.items())}


def err_record(e):
    return {'error': e.get_dbus_name(), 'message': e.get_dbus_message()}


class Client:
    """One private connection to the bus: its own unique name, and a log of
    everything org.bluez sent it (signals and replies) in arrival order."""

    def __init__(self, probe, label):
        self.probe = probe
        self.label = label
        self.conn = dbus.bus.BusConnection(probe.address, mainloop=probe.loop)
        self.events = []
        self.conn.add_signal_receiver(self._on_signal, sender_keyword='sender',
                                      member_keyword='member', path_keyword='path',
                                      interface_keyword='iface', bus_name=None)

    def _on_signal(self, *args, sender=None, member=None, path=None, iface=None):
        if iface == 'org.freedesktop.DBus':
            return
        if iface == PROPS and member == 'PropertiesChanged':
            ev = {'signal': 'PropertiesChanged', 'path': norm_str(path), 'interface': str(args[0]),
                  'changed': props_record(args[1]), 'invalidated': [str(x) for x in args[2]]}
        elif iface == OM and member == 'InterfacesAdded':
            ev = {'signal': 'InterfacesAdded', 'path': norm_str(args[0]),
                  'interfaces': sorted(str(k) for k in args[1].keys())}
            self.probe.added.append((str(args[0]), args[1]))
        elif iface == OM and member == 'InterfacesRemoved':
            ev = {'signal': 'InterfacesRemoved', 'path': norm_str(args[0]),
                  'interfaces': sorted(str(k) for k in args[1])}
        else:
            ev = {'signal': '%s.%s' % (iface, member), 'path': norm_str(path)}
        self.events.append(ev)

    def obj(self, path):
        return self.conn.get_object(BLUEZ, path, introspect=False)

    def call(self, path, iface, method, *args, signature=None, timeout=25):
        """Asynchronous call waited for on the main loop, so that its reply is
        logged in order with the signals around it. Returns a record."""
        box = {}

        def ok(*res):
            box['r'] = {'ok': [plain(x) for x in res]}
            self.events.append({'reply': method})

        def bad(e):
            box['r'] = err_record(e)
            self.events.append({'reply': method, 'error': e.get_dbus_name()})

        self.conn.call_async(BLUEZ, path, iface, method, signature, args, ok, bad,
                             timeout=timeout)
        self.probe.wait(lambda: 'r' in box, timeout + 5, '%s reply' % method)
        return box.get('r', {'probe': 'no reply within %ss' % timeout})

    def get(self, path, iface, name):
        return self.obj(path).Get(iface, name, dbus_interface=PROPS)

    def set(self, path, iface, name, value):
        return self.call(path, PROPS, 'Set', iface, name, value, signature='ssv')

    def take_events(self):
        ev, self.events = self.events, []
        return ev

    def close(self):
        self.conn.close()


class Probe:
    def __init__(self, args):
        self.args = args
        self.loop = dbus.mainloop.glib.DBusGMainLoop()
        self.address = args.bus
        self.ctx = GLib.MainContext.default()
        self.added = []
        self.a = Client(self, 'A')
        self.adapter = '/org/bluez/' + args.adapter
        self.result = {'probe': 1, 'adapter': 'hciN', 'checks': {}}

    # -- waiting ----------------------------------------------------------
    def wait(self, pred, timeout, what):
        """Run the main loop until pred() or the deadline. Returns pred()."""
        end = time.monotonic() + timeout
        while not pred():
            left = end - time.monotonic()
            if left <= 0:
                log('timeout waiting for', what)
                return False
            fired = []
            src = GLib.timeout_add(int(min(left, 0.5) * 1000) + 1, lambda: fired.append(1) and False)
            self.ctx.iteration(True)
            if not fired:
                GLib.source_remove(src)
        return True

    def sync(self, client):
        """A round trip to org.bluez on client's connection: every signal
        bluetoothd sent before answering has been received after this."""
        client.call(self.adapter, PROPS, 'Get', ADAPTER, 'Powered')
        if client.events and client.events[-1].get('reply') == 'Get':
            client.events.pop()

    def prop(self, client, name, iface=ADAPTER, path=None):
        return plain(client.get(path or self.adapter, iface, name))

    def wait_prop(self, client, name, value, timeout=20, path=None, iface=ADAPTER):
        """Wait for a PropertiesChanged that sets name to value on client."""
        path_n = norm_str(path or self.adapter)

        def seen():
            return any(e.get('signal') == 'PropertiesChanged' and e['path'] == path_n and
                       e['changed'].get(name, {}).get('value') == value for e in client.events)
        return self.wait(seen, timeout, '%s=%s' % (name, value))

    def ensure_powered(self, on):
        if self.prop(self.a, 'Powered') != on:
            self.a.set(self.adapter, ADAPTER, 'Powered', dbus.Boolean(on))
            self.wait_prop(self.a, 'Powered', on)
        self.sync(self.a)
        self.a.take_events()

    # -- running ----------------------------------------------------------
    def check(self, name, fn):
        log('check', name)
        try:
            self.result['checks'][name] = fn()
        except Exception as e:  # a broken check is recorded, the rest still run
            self.result['checks'][name] = {'probe_exception': '%s: %s' % (type(e).__name__, e)}
            log('  exception', e)

    def run(self):
        c = self.check
        c('object_tree', self.object_tree)
        c('introspect', self.introspect)
        c('adapter_properties', self.adapter_properties)
        # devices first, on a freshly powered adapter (found reliably there)
        c('device_discovered', self.device_discovered)
        # connect before the non-connectable attempt: that one holds the
        # controller's single LE connection attempt for about 40 s
        c('device_connect', self.device_connect)
        c('device_connect_errors', self.device_connect_errors)
        c('set_property_errors', self.set_property_errors)
        c('powered_off_errors', self.powered_off_errors)
        c('power_on_signals', self.power_on_signals)
        c('stop_discovery_without_session', self.stop_without_session)
        c('discovery_one_client', self.discovery_one_client)
        c('discovery_two_clients', self.discovery_two_clients)
        c('discovery_filter_valid', self.filter_valid)
        c('discovery_filter_invalid', self.filter_invalid)
        c('get_discovery_filters', self.get_discovery_filters)
        c('client_leaves_bus', self.client_leaves)
        c('power_off_while_discovering', self.power_off_while_discovering)
        c('remove_device_errors', self.remove_device_errors)
        return self.result

    # -- checks -----------------------------------------------------------
    def object_tree(self):
        objs = self.a.obj('/').GetManagedObjects(dbus_interface=OM)
        tree = {}
        for path, ifaces in objs.items():
            path = str(path)
            if '/dev_' in path:
                continue  # devices are checked on their own
            key = re.sub(r'/hci\d+$', '/hciN', path) if path == self.adapter else path
            tree[key] = sorted(str(i) for i in ifaces.keys())
        adapters = sorted(p for p in tree if re.match(r'^/org/bluez/hci\d+$', p))
        return {'paths_with_interfaces': {k: v for k, v in tree.items()
                                          if not re.match(r'^/org/bluez/hci\d+$', k)},
                'adapter_count_at_least_2': len(adapters) + (1 if '/org/bluez/hciN' in tree else 0) >= 2}

    def introspect_path(self, path):
        xml = self.a.obj(path).Introspect(dbus_interface=INTRO)
        root = ET.fromstring(str(xml))
        out = {}
        for itf in root.findall('interface'):
            name = itf.get('name')
            entry = {'methods': {}, 'signals': {}, 'properties': {}}
            for m in itf.findall('method'):
                entry['methods'][m.get('name')] = {
                    'in': ''.join(a.get('type') for a in m.findall('arg') if a.get('direction', 'in') == 'in'),
                    'out': ''.join(a.get('type') for a in m.findall('arg') if a.get('direction') == 'out')}
            for s in itf.findall('signal'):
                entry['signals'][s.get('name')] = ''.join(a.get('type') for a in s.findall('arg'))
            for p in itf.findall('property'):
                entry['properties'][p.get('name')] = {'type': p.get('type'), 'access': p.get('access')}
            out[name] = entry
        children = sorted(re.sub(r'^hci\d+$', 'hciN', re.sub(ADDR_RE, 'XX_XX', n.get('name')))
                          for n in root.findall('node') if n.get('name'))
        return {'interfaces': out, 'child_nodes': sorted(set(children))}

    def introspect(self):
        return {'/': self.introspect_path('/'),
                '/org/bluez': self.introspect_path('/org/bluez'),
                '/org/bluez/hciN': self.introspect_path(self.adapter)}

    def adapter_properties(self):
        allp = self.a.obj(self.adapter).GetAll(ADAPTER, dbus_interface=PROPS)
        return {'getall': props_record(allp),
                'getall_unknown_interface': self.a.call(self.adapter, PROPS, 'GetAll', 'org.bluez.Nope1'),
                'get_unknown_property': self.a.call(self.adapter, PROPS, 'Get', ADAPTER, 'Nope')}

    def set_property_errors(self):
        s = lambda n, v: self.a.set(self.adapter, ADAPTER, n, v)
        r = {'Address': s('Address', dbus.String('00:11:22:33:44:55')),
             'Discovering': s('Discovering', dbus.Boolean(True)),
             'Roles': s('Roles', dbus.Array([], signature='s')),
             'unknown_property': s('Nope', dbus.Boolean(True)),
             'Powered_wrong_type': s('Powered', dbus.String('yes')),
             'Alias_wrong_type': s('Alias', dbus.UInt32(1)),
             'DiscoverableTimeout_wrong_type': s('DiscoverableTimeout', dbus.Int32(5))}
        alias0 = self.prop(self.a, 'Alias')
        r['Alias_set'] = s('Alias', dbus.String('probe-alias'))
        r['Alias_after_set_is_new'] = self.prop(self.a, 'Alias') == 'probe-alias'
        r['Alias_set_empty'] = s('Alias', dbus.String(''))
        r['Alias_after_empty_equals_Name'] = self.prop(self.a, 'Alias') == self.prop(self.a, 'Name')
        s('Alias', dbus.String(alias0))
        self.sync(self.a)
        self.a.take_events()
        return r

    def powered_off_errors(self):
        self.ensure_powered(True)
        r = {'set_powered_false': self.a.set(self.adapter, ADAPTER, 'Powered', dbus.Boolean(False))}
        self.wait_prop(self.a, 'Powered', False)
        self.sync(self.a)
        r['signals'] = self.a.take_events()
        r['StartDiscovery'] = self.a.call(self.adapter, ADAPTER, 'StartDiscovery')
        r['StopDiscovery'] = self.a.call(self.adapter, ADAPTER, 'StopDiscovery')
        r['SetDiscoveryFilter'] = self.a.call(self.adapter, ADAPTER, 'SetDiscoveryFilter',
                                              dbus.Dictionary({}, signature='sv'), signature='a{sv}')
        r['RemoveDevice'] = self.a.call(self.adapter, ADAPTER, 'RemoveDevice',
                                        dbus.ObjectPath(self.adapter + '/dev_00_00_00_00_00_01'))
        r['set_discoverable_true'] = self.a.set(self.adapter, ADAPTER, 'Discoverable', dbus.Boolean(True))
        r['Discovering'] = self.prop(self.a, 'Discovering')
        self.sync(self.a)
        r['events_after'] = self.a.take_events()
        return r

    def power_on_signals(self):
        self.ensure_powered(False)
        r = {'set_powered_true': self.a.set(self.adapter, ADAPTER, 'Powered', dbus.Boolean(True))}
        self.wait_prop(self.a, 'Powered', True)
        self.sync(self.a)
        r['events'] = self.a.take_events()
        r['Powered'] = self.prop(self.a, 'Powered')
        r['set_powered_true_again'] = self.a.set(self.adapter, ADAPTER, 'Powered', dbus.Boolean(True))
        self.sync(self.a)
        r['events_again'] = self.a.take_events()
        return r

    def stop_without_session(self):
        self.ensure_powered(True)
        return {'StopDiscovery': self.a.call(self.adapter, ADAPTER, 'StopDiscovery')}

    def discovery_one_client(self):
        self.ensure_powered(True)
        r = {'StartDiscovery': self.a.call(self.adapter, ADAPTER, 'StartDiscovery')}
        self.wait_prop(self.a, 'Discovering', True)
        self.sync(self.a)
        r['events_start'] = self.adapter_events(self.a.take_events())
        r['StartDiscovery_again'] = self.a.call(self.adapter, ADAPTER, 'StartDiscovery')
        r['StopDiscovery'] = self.a.call(self.adapter, ADAPTER, 'StopDiscovery')
        self.wait_prop(self.a, 'Discovering', False)
        self.sync(self.a)
        r['events_stop'] = self.adapter_events(self.a.take_events())
        r['StopDiscovery_again'] = self.a.call(self.adapter, ADAPTER, 'StopDiscovery')
        return r

    def adapter_events(self, events):
        """Events about the adapter itself (replies, adapter signals); device
        objects come and go with the air and are checked elsewhere."""
        dev = norm_str(self.adapter) + '/'
        return [e for e in events if not e.get('path', '').startswith(dev)
                and not (e.get('signal') == 'InterfacesAdded' and '/dev_' in e.get('path', ''))]

    def discovery_two_clients(self):
        self.ensure_powered(True)
        b = Client(self, 'B')
        r = {'A_StartDiscovery': self.a.call(self.adapter, ADAPTER, 'StartDiscovery')}
        self.wait_prop(self.a, 'Discovering', True)
        self.sync(b)
        b.take_events()
        r['B_StartDiscovery'] = b.call(self.adapter, ADAPTER, 'StartDiscovery')
        self.sync(b)
        r['B_events_after_start'] = self.adapter_events(b.take_events())
        self.a.take_events()
        r['A_StopDiscovery'] = self.a.call(self.adapter, ADAPTER, 'StopDiscovery')
        self.sync(self.a)
        r['A_events_after_A_stop'] = self.adapter_events(self.a.take_events())
        r['Discovering_after_A_stop'] = self.prop(self.a, 'Discovering')
        r['B_StopDiscovery'] = b.call(self.adapter, ADAPTER, 'StopDiscovery')
        self.wait_prop(b, 'Discovering', False)
        self.sync(b)
        r['B_events_after_B_stop'] = self.adapter_events(b.take_events())
        r['Discovering_after_B_stop'] = self.prop(self.a, 'Discovering')
        b.close()
        self.a.take_events()
        return r

    def set_filter(self, client, d):
        return client.call(self.adapter, ADAPTER, 'SetDiscoveryFilter',
                           dbus.Dictionary(d, signature='sv'), signature='a{sv}')

    def filter_valid(self):
        self.ensure_powered(True)
        cases = {
            'empty': {},
            'Transport_le': {'Transport': 'le'},
            'Transport_auto': {'Transport': 'auto'},
            'Transport_bredr': {'Transport': 'bredr'},
            'UUIDs_16bit': {'UUIDs': dbus.Array(['180d'], signature='s')},
            'UUIDs_128bit': {'UUIDs': dbus.Array(['0000180d-0000-1000-8000-00805f9b34fb'], signature='s')},
            'RSSI': {'RSSI': dbus.Int16(-70)},
            'Pathloss': {'Pathloss': dbus.UInt16(50)},
            'DuplicateData': {'DuplicateData': dbus.Boolean(False)},
            'Discoverable': {'Discoverable': dbus.Boolean(True)},
            'Pattern': {'Pattern': 'Test'},
            'RSSI_min': {'RSSI': dbus.Int16(-127)},
            'RSSI_max': {'RSSI': dbus.Int16(20)},
            'Pathloss_max': {'Pathloss': dbus.UInt16(137)},
        }
        r = {k: self.set_filter(self.a, v) for k, v in cases.items()}
        # a filter then a session: discovery runs with it
        self.set_filter(self.a, {'Transport': 'le'})
        r['start_with_filter'] = self.a.call(self.adapter, ADAPTER, 'StartDiscovery')
        self.wait_prop(self.a, 'Discovering', True)
        r['set_filter_while_discovering'] = self.set_filter(self.a, {'Transport': 'le', 'RSSI': dbus.Int16(-100)})
        # bluetoothd restarts discovery for the new filter; a StopDiscovery
        # while that is pending is refused with InProgress (timing-dependent,
        # so kept under 'info' and retried until the restart is done)
        r['stop'] = self.stop_retrying_busy(r)
        self.wait_prop(self.a, 'Discovering', False)
        r['clear'] = self.set_filter(self.a, {})
        self.sync(self.a)
        self.a.take_events()
        return r

    def stop_retrying_busy(self, r):
        first = None
        end = time.monotonic() + 15
        while True:
            res = self.a.call(self.adapter, ADAPTER, 'StopDiscovery')
            first = first or res
            if res.get('error') != 'org.bluez.Error.InProgress' or time.monotonic() > end:
                break
            self.wait(lambda: False, 0.2, 'restart after filter change')
        r.setdefault('info', {})['first_stop_after_filter_change'] = first
        return res

    def filter_invalid(self):
        self.ensure_powered(True)
        cases = {
            'unknown_key': {'Foo': dbus.Int32(1)},
            'Transport_bad_value': {'Transport': 'radio'},
            'Transport_wrong_type': {'Transport': dbus.Int32(1)},
            'RSSI_and_Pathloss': {'RSSI': dbus.Int16(-70), 'Pathloss': dbus.UInt16(50)},
            'RSSI_wrong_type_int32': {'RSSI': dbus.Int32(-70)},
            'RSSI_wrong_type_string': {'RSSI': '-70'},
            'RSSI_below_min': {'RSSI': dbus.Int16(-128)},
            'RSSI_above_max': {'RSSI': dbus.Int16(21)},
            'Pathloss_above_max': {'Pathloss': dbus.UInt16(138)},
            'Pathloss_wrong_type': {'Pathloss': dbus.Int16(50)},
            'UUIDs_bad_uuid': {'UUIDs': dbus.Array(['not-a-uuid'], signature='s')},
            'UUIDs_wrong_type': {'UUIDs': '180d'},
            'DuplicateData_wrong_type': {'DuplicateData': dbus.Int32(1)},
            'Discoverable_wrong_type': {'Discoverable': 'yes'},
            'Pattern_wrong_type': {'Pattern': dbus.Int32(1)},
        }
        r = {k: self.set_filter(self.a, v) for k, v in cases.items()}
        r['wrong_signature_string'] = self.a.call(self.adapter, ADAPTER, 'SetDiscoveryFilter', 'le',
                                                  signature='s')
        r['wrong_signature_none'] = self.a.call(self.adapter, ADAPTER, 'SetDiscoveryFilter', signature='')
        r['StartDiscovery_with_arg'] = self.a.call(self.adapter, ADAPTER, 'StartDiscovery', 'x', signature='s')
        r['unknown_method'] = self.a.call(self.adapter, ADAPTER, 'Nope')
        self.set_filter(self.a, {})
        return r

    def get_discovery_filters(self):
        return self.a.call(self.adapter, ADAPTER, 'GetDiscoveryFilters')

    def client_leaves(self):
        self.ensure_powered(True)
        c = Client(self, 'C')
        r = {'C_StartDiscovery': c.call(self.adapter, ADAPTER, 'StartDiscovery')}
        self.wait_prop(self.a, 'Discovering', True)
        self.sync(self.a)
        self.a.take_events()
        c.close()
        r['Discovering_false_after_leave'] = self.wait_prop(self.a, 'Discovering', False)
        self.sync(self.a)
        r['A_events'] = self.adapter_events(self.a.take_events())
        # a filter is dropped with the client too: a new session by A is unfiltered
        return r

    def power_off_while_discovering(self):
        self.ensure_powered(True)
        r = {'StartDiscovery': self.a.call(self.adapter, ADAPTER, 'StartDiscovery')}
        self.wait_prop(self.a, 'Discovering', True)
        self.sync(self.a)
        self.a.take_events()
        r['set_powered_false'] = self.a.set(self.adapter, ADAPTER, 'Powered', dbus.Boolean(False))
        self.wait_prop(self.a, 'Powered', False)
        self.wait_prop(self.a, 'Discovering', False, timeout=5)
        self.sync(self.a)
        r['events'] = self.adapter_events(self.a.take_events())
        r['Discovering_while_off'] = self.prop(self.a, 'Discovering')
        r['StopDiscovery_while_off'] = self.a.call(self.adapter, ADAPTER, 'StopDiscovery')
        self.a.set(self.adapter, ADAPTER, 'Powered', dbus.Boolean(True))
        self.wait_prop(self.a, 'Powered', True)
        self.sync(self.a)
        r['events_power_on'] = self.adapter_events(self.a.take_events())
        r['Discovering_after_power_on'] = self.prop(self.a, 'Discovering')
        r['StopDiscovery_after_power_on'] = self.a.call(self.adapter, ADAPTER, 'StopDiscovery')
        if 'ok' in r['StopDiscovery_after_power_on']:
            self.wait_prop(self.a, 'Discovering', False, timeout=10)
        self.sync(self.a)
        self.a.take_events()
        return r

    def remove_device_errors(self):
        self.ensure_powered(True)
        return {
            'unknown_device_path': self.a.call(self.adapter, ADAPTER, 'RemoveDevice',
                                               dbus.ObjectPath(self.adapter + '/dev_00_00_00_00_00_01')),
            'path_outside_adapter': self.a.call(self.adapter, ADAPTER, 'RemoveDevice', dbus.ObjectPath('/nope')),
            'adapter_path': self.a.call(self.adapter, ADAPTER, 'RemoveDevice', dbus.ObjectPath(self.adapter)),
        }

    def find_device(self, address, timeout=30, name=None):
        """Discover until a device (by address or name, else any) appears.
        Returns its path."""
        want = address.upper() if address else None

        for path, ifaces in self.a.obj('/').GetManagedObjects(dbus_interface=OM).items():
            self.added.append((str(path), ifaces))

        def match():
            for path, ifaces in self.added:
                if DEVICE in ifaces and path.startswith(self.adapter + '/'):
                    dev = ifaces[DEVICE]
                    if name is not None:
                        if str(dev.get('Name', '')) == name:
                            return path
                    elif want is None or str(dev.get('Address', '')).upper() == want:
                        return path
            return None
        self.wait(lambda: match() is not None, timeout, 'device %s' % address)
        return match()

    def device_discovered(self):
        self.ensure_powered(True)
        self.added.clear()
        self.set_filter(self.a, {'Transport': 'le'})
        r = {'StartDiscovery': self.a.call(self.adapter, ADAPTER, 'StartDiscovery')}
        path = self.find_device(self.args.peer_address, timeout=45)
        if not path:
            r['found'] = False
            return r
        r['found'] = True
        added = next(i for p, i in reversed(self.added) if p == path)
        r['path_shape'] = re.sub(r'dev_([0-9A-F]{2}_){5}[0-9A-F]{2}$', 'dev_XX_XX_XX_XX_XX_XX', path.replace(self.adapter, '/org/bluez/hciN'))
        r['interfaces_added'] = sorted(str(k) for k in added.keys())
        r['interfaces_added_device_properties'] = props_record(added[DEVICE])
        allp = self.a.obj(path).GetAll(DEVICE, dbus_interface=PROPS)
        r['getall'] = props_record(allp)
        r['introspect'] = self.introspect_path(path)
        r['StopDiscovery'] = self.a.call(self.adapter, ADAPTER, 'StopDiscovery')
        self.wait_prop(self.a, 'Discovering', False)
        self.sync(self.a)
        r['device_still_present_after_stop'] = self.present(path)
        self.device_path = path
        self.set_filter(self.a, {})
        self.a.take_events()
        return r

    def present(self, path):
        objs = self.a.obj('/').GetManagedObjects(dbus_interface=OM)
        return dbus.ObjectPath(path) in objs

    def device_connect_errors(self):
        self.ensure_powered(True)
        r = {'Connect_unknown_path': self.a.call(self.adapter + '/dev_00_00_00_00_00_01', DEVICE, 'Connect')}
        if self.args.nonconn_name:
            self.added.clear()
            self.a.call(self.adapter, ADAPTER, 'StartDiscovery')
            path = self.find_device(None, name=self.args.nonconn_name)
            if path:
                # while discovering: bluetoothd drops non-connectable temporary
                # devices when discovery stops
                props = self.a.obj(path).GetAll(DEVICE, dbus_interface=PROPS)
                r['nonconnectable_getall'] = props_record(props)
                t0 = time.monotonic()
                self.sync(self.a)
                self.a.take_events()
                # timing-dependent (about 40 s, sometimes longer): kept under info
                res = self.a.call(path, DEVICE, 'Connect', timeout=50)
                took = time.monotonic() - t0
                log('  Connect to the non-connectable device answered in %.1fs' % took)
                r['info'] = {'Connect_nonconnectable_seconds': round(took, 1), 'Connect_nonconnectable': res}
                self.sync(self.a)
                self.a.take_events()
            r['nonconnectable_found'] = bool(path)
            self.a.call(self.adapter, ADAPTER, 'StopDiscovery')
            self.wait_prop(self.a, 'Discovering', False)
            self.sync(self.a)
            if path:
                r['nonconnectable_present_after_stop'] = self.present(path)
            self.a.take_events()
        r['Disconnect_not_connected'] = (self.a.call(self.device_path, DEVICE, 'Disconnect')
                                         if getattr(self, 'device_path', None) else None)
        return r

    def device_connect(self):
        path = getattr(self, 'device_path', None)
        if not path or not self.args.connect:
            return {'skipped': True}
        self.ensure_powered(True)
        self.a.take_events()
        r = {'Connect': self.a.call(path, DEVICE, 'Connect', timeout=60)}
        self.wait_prop(self.a, 'ServicesResolved', True, path=path, iface=DEVICE, timeout=30)
        self.sync(self.a)
        np = norm_str(path)
        ev = [e for e in self.a.take_events() if e.get('path', '').startswith(np) or 'reply' in e]
        # GATT objects: keep the kinds, not the count or handles
        r['events'] = []
        for e in ev:
            if e.get('signal') == 'InterfacesAdded' and e['path'] != np:
                e = {'signal': 'InterfacesAdded', 'path': 'gatt-object', 'interfaces': e['interfaces']}
                if r['events'] and r['events'][-1] == e:
                    continue
            r['events'].append(e)
        r['Connect_again'] = self.a.call(path, DEVICE, 'Connect', timeout=30)
        r['Disconnect'] = self.a.call(path, DEVICE, 'Disconnect', timeout=30)
        self.wait_prop(self.a, 'Connected', False, path=path, iface=DEVICE, timeout=20)
        self.sync(self.a)
        ev = [e for e in self.a.take_events() if e.get('path', '').startswith(np) or 'reply' in e]
        r['disconnect_events'] = [e for e in ev if not (e.get('signal') == 'InterfacesRemoved' and e['path'] != np)]
        r['disconnect_removed_gatt_objects'] = any(e.get('signal') == 'InterfacesRemoved' and e['path'] != np for e in ev)
        return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--bus', default=None, help='D-Bus address (default: the system bus)')
    ap.add_argument('--adapter', default='hci1')
    ap.add_argument('--peer-address', default=None, help='address of a connectable advertiser (default: any device)')
    ap.add_argument('--nonconn-name', default=None,
                    help='local name of a non-connectable advertiser (its address is a random one)')
    ap.add_argument('--connect', action='store_true', help='also connect to the peer and record the signals')
    ap.add_argument('--out', required=True)
    args = ap.parse_args()
    if args.bus is None:
        import os
        args.bus = os.environ.get('DBUS_SYSTEM_BUS_ADDRESS', 'unix:path=/run/dbus/system_bus_socket')
    probe = Probe(args)
    result = probe.run()
    with open(args.out, 'w') as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write('\n')
    broken = [k for k, v in result['checks'].items() if isinstance(v, dict) and 'probe_exception' in v]
    log('wrote', args.out, '; checks with probe exceptions:', broken or 'none')
    return 1 if broken else 0


if __name__ == '__main__':
    sys.exit(main())
