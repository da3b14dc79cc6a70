#!/usr/bin/python3
"""A GATT application and advertisement for blesim's peripheral-role tests (written for this project).

Registers on the adapter given as argv[1] (default hci0), through org.bluez's GattManager1 and
LEAdvertisingManager1, with python3-dbus and GLib as BlueZ's own examples use them. It prints one
line per call bluetoothd (here blesim) makes on it, so a test can tell what reached it:

  service 6a3e0000-...:
    data   (6a3e0001) read, write, write-without-response: a stored value
    pulse  (6a3e0002) notify: StartNotify starts a counter (Value changes every 50 ms)
    stream (6a3e0003) notify, offers AcquireNotify (NotifyAcquired): packets 0x10 n on its socket
    sink   (6a3e0004) write-without-response, offers AcquireWrite (WriteAcquired)
    alert  (6a3e0005) indicate: StartNotify starts a counter; prints each Confirm
  service 180F (Battery): 2A19 read, notify, 80 at first, one less every 200 ms while notifying
"""

import os
import socket
import sys

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

BASE = "6a3e000{}-1b2c-4d5e-8f90-a1b2c3d4e5f6"
SERVICE = BASE.format(0)
ROOT = "/org/blesim/bridge"
CHRC = "org.bluez.GattCharacteristic1"


def say(line):
    print(line, flush=True)


def describe(options):
    keys = ("device", "mtu", "link", "offset", "type")
    return " ".join(f"{key}={options[key]}" for key in keys if key in options)


class Characteristic(dbus.service.Object):
    def __init__(self, bus, service, index, name, uuid, flags, extra=None):
        self.path = f"{service.path}/char{index}"
        self.service = service
        self.name = name
        self.uuid = uuid
        self.flags = flags
        self.extra = extra or {}
        self.value = [0]
        self.timer = None
        self.counter = 0
        dbus.service.Object.__init__(self, bus, self.path)

    def properties(self):
        props = {"Service": dbus.ObjectPath(self.service.path), "UUID": self.uuid,
                 "Flags": dbus.Array(self.flags, signature="s")}
        props.update(self.extra)
        return {CHRC: props}

    def changed(self, value):
        self.value = value
        self.PropertiesChanged(CHRC, {"Value": dbus.Array(value, signature="y")}, [])

    @dbus.service.signal("org.freedesktop.DBus.Properties", signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass

    @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.properties()[CHRC]

    @dbus.service.method(CHRC, in_signature="a{sv}", out_signature="ay")
    def ReadValue(self, options):
        say(f"ReadValue {self.name} {describe(options)}")
        return dbus.Array(self.value, signature="y")

    @dbus.service.method(CHRC, in_signature="aya{sv}")
    def WriteValue(self, value, options):
        self.value = [int(b) for b in value]
        say(f"WriteValue {self.name} {bytes(self.value).hex()} {describe(options)}")

    @dbus.service.method(CHRC)
    def StartNotify(self):
        say(f"StartNotify {self.name}")
        if self.timer is None:
            self.timer = GLib.timeout_add(self.extra_interval(), self.tick)

    @dbus.service.method(CHRC)
    def StopNotify(self):
        say(f"StopNotify {self.name}")
        if self.timer is not None:
            GLib.source_remove(self.timer)
            self.timer = None

    @dbus.service.method(CHRC)
    def Confirm(self):
        say(f"Confirm {self.name}")

    def extra_interval(self):
        return 200 if self.name == "battery" else 50

    def tick(self):
        if self.name == "battery":
            self.changed([max(self.value[0] - 1, 0)])
        else:
            self.counter = (self.counter + 1) % 256
            self.changed([self.counter])
        return True


class Stream(Characteristic):
    """Offers AcquireNotify: bluetoothd reads notifications from the socket it returns."""

    def __init__(self, bus, service, index):
        super().__init__(bus, service, index, "stream", BASE.format(3), ["notify"],
                         {"NotifyAcquired": dbus.Boolean(False)})
        self.sock = None

    @dbus.service.method(CHRC, in_signature="a{sv}", out_signature="hq")
    def AcquireNotify(self, options):
        say(f"AcquireNotify stream {describe(options)}")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock = ours
        self.counter = 0
        self.timer = GLib.timeout_add(50, self.send)
        GLib.io_add_watch(ours.fileno(), GLib.IO_HUP | GLib.IO_ERR, self.closed)
        fd = dbus.types.UnixFd(theirs.fileno())
        theirs.close()
        return (fd, dbus.UInt16(options.get("mtu", 23)))

    def send(self):
        if self.sock is None:
            return False
        self.counter = (self.counter + 1) % 256
        try:
            self.sock.send(bytes([0x10, self.counter]))
        except OSError:
            return False
        return True

    def closed(self, *_args):
        say("stream socket closed")
        if self.timer is not None:
            GLib.source_remove(self.timer)
            self.timer = None
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        return False


class Sink(Characteristic):
    """Offers AcquireWrite: bluetoothd writes what centrals write into the socket it returns."""

    def __init__(self, bus, service, index):
        super().__init__(bus, service, index, "sink", BASE.format(4), ["write-without-response"],
                         {"WriteAcquired": dbus.Boolean(False)})
        self.sock = None

    @dbus.service.method(CHRC, in_signature="a{sv}", out_signature="hq")
    def AcquireWrite(self, options):
        say(f"AcquireWrite sink {describe(options)}")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock = ours
        GLib.io_add_watch(ours.fileno(), GLib.IO_IN | GLib.IO_HUP, self.readable)
        fd = dbus.types.UnixFd(theirs.fileno())
        theirs.close()
        return (fd, dbus.UInt16(options.get("mtu", 23)))

    def readable(self, *_args):
        data = self.sock.recv(1024)
        if not data:
            say("sink socket closed")
            return False
        say(f"sink got {data.hex()}")
        return True


class Service(dbus.service.Object):
    def __init__(self, bus, index, uuid):
        self.path = f"{ROOT}/service{index}"
        self.uuid = uuid
        self.characteristics = []
        dbus.service.Object.__init__(self, bus, self.path)

    def properties(self):
        return {"org.bluez.GattService1": {"UUID": self.uuid, "Primary": True}}


class Application(dbus.service.Object):
    def __init__(self, bus):
        dbus.service.Object.__init__(self, bus, ROOT)
        main = Service(bus, 0, SERVICE)
        main.characteristics = [
            Characteristic(bus, main, 0, "data", BASE.format(1), ["read", "write", "write-without-response"]),
            Characteristic(bus, main, 1, "pulse", BASE.format(2), ["notify"]),
            Stream(bus, main, 2),
            Sink(bus, main, 3),
            Characteristic(bus, main, 4, "alert", BASE.format(5), ["indicate"]),
        ]
        battery = Service(bus, 1, "180f")
        level = Characteristic(bus, battery, 0, "battery", "2a19", ["read", "notify"])
        level.value = [80]
        battery.characteristics = [level]
        self.services = [main, battery]

    @dbus.service.method("org.freedesktop.DBus.ObjectManager", out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        objects = {}
        for service in self.services:
            objects[dbus.ObjectPath(service.path)] = service.properties()
            for chrc in service.characteristics:
                objects[dbus.ObjectPath(chrc.path)] = chrc.properties()
        return objects


class Advertisement(dbus.service.Object):
    PATH = "/org/blesim/bridge/advertisement"

    def __init__(self, bus):
        dbus.service.Object.__init__(self, bus, self.PATH)

    @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return {"Type": "peripheral", "ServiceUUIDs": dbus.Array([SERVICE], signature="s"),
                "LocalName": "bridge-app"}

    @dbus.service.method("org.bluez.LEAdvertisement1")
    def Release(self):
        say("advertisement released")


def main():
    adapter = "/org/bluez/" + (sys.argv[1] if len(sys.argv) > 1 else "hci0")
    DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    app = Application(bus)
    advertisement = Advertisement(bus)
    loop = GLib.MainLoop()
    remaining = {"count": 2}

    def done(what):
        say(f"{what} registered")
        remaining["count"] -= 1
        if remaining["count"] == 0:
            say("ready")

    def failed(what):
        def report(error):
            say(f"{what} failed: {error}")
            loop.quit()
            os._exit(1)
        return report

    obj = bus.get_object("org.bluez", adapter)
    dbus.Interface(obj, "org.bluez.GattManager1").RegisterApplication(
        dbus.ObjectPath(ROOT), {}, reply_handler=lambda: done("application"),
        error_handler=failed("application"))
    dbus.Interface(obj, "org.bluez.LEAdvertisingManager1").RegisterAdvertisement(
        dbus.ObjectPath(Advertisement.PATH), {}, reply_handler=lambda: done("advertisement"),
        error_handler=failed("advertisement"))
    _ = (app, advertisement)
    loop.run()


if __name__ == "__main__":
    main()
