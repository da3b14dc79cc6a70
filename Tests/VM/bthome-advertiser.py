#!/usr/bin/python3
"""A BTHome v2 sensor on a real adapter, for Tests/VM/scenarios.sh: registers one LEAdvertisement1 with the given
service data under UUID 0xFCD2 through bluetoothd's LEAdvertisingManager1, prints "advertising" once bluetoothd
accepted it, and keeps it on the air until killed.

Type "peripheral" (connectable), not "broadcast": the kernel sends a non-connectable advertisement from a fresh
non-resolvable private address, and the gateway looks bind keys up by the sender's address, so the sensor must
advertise from the adapter's own.

    bthome-advertiser.py ADAPTER HEX

Debian's python3-dbus and python3-gi (/usr/bin/python3), as BlueZ's own example scripts use.
"""

import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

PATH = "/org/bleagent/vm/bthome"
ADVERTISEMENT = "org.bluez.LEAdvertisement1"


class Advertisement(dbus.service.Object):
    def __init__(self, bus, data):
        self.data = data
        dbus.service.Object.__init__(self, bus, PATH)

    @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        if interface != ADVERTISEMENT:
            raise dbus.exceptions.DBusException("no such interface", name="org.freedesktop.DBus.Error.InvalidArgs")
        service_data = dbus.Dictionary({"fcd2": dbus.Array(self.data, signature="y")}, signature="sv")
        return {"Type": "peripheral", "ServiceData": service_data}

    @dbus.service.method(ADVERTISEMENT, in_signature="", out_signature="")
    def Release(self):
        print("released", flush=True)


def main():
    adapter, data = sys.argv[1], bytes.fromhex(sys.argv[2])
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    advertisement = Advertisement(bus, data)
    manager = dbus.Interface(bus.get_object("org.bluez", "/org/bluez/" + adapter), "org.bluez.LEAdvertisingManager1")
    loop = GLib.MainLoop()

    def registered():
        print("advertising", flush=True)

    def failed(error):
        print("FAIL: RegisterAdvertisement: %s" % error, flush=True)
        loop.quit()

    manager.RegisterAdvertisement(PATH, {}, reply_handler=registered, error_handler=failed)
    loop.run()


if __name__ == "__main__":
    main()
