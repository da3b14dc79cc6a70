"""Bleak (PyPI, unmodified) on hci1 as a central against a GATT application on hci0 (not a scenario device).

The application is Tests/BlesimTests/Fixtures/bridge-app.py, registered on blesim's hci0 through GattManager1 and
LEAdvertisingManager1. Run by Tests/BleakTests with DBUS_SYSTEM_BUS_ADDRESS pointing at that private bus. Prints one
"ok:" line per step; any failed check raises, prints "FAIL:" and exits 1. Every wait is on an event with a generous
deadline, never a fixed sleep.
"""

import asyncio
import importlib.metadata
import sys

from bleak import BleakClient, BleakScanner

ADAPTER = "hci1"
BASE = "6a3e000{}-1b2c-4d5e-8f90-a1b2c3d4e5f6"
SERVICE, DATA, PULSE, STREAM, SINK, ALERT = (BASE.format(n) for n in range(6))
BATTERY_LEVEL = "00002a19-0000-1000-8000-00805f9b34fb"
DEADLINE = 30.0


def check(condition, message):
    if not condition:
        raise AssertionError(message)


async def scan():
    """A service-filtered scan on hci1 finds hci0's advertisement."""
    found = asyncio.Event()
    seen = {}

    def on_report(device, adv):
        if adv.local_name == "bridge-app":
            seen["device"], seen["adv"] = device, adv
            found.set()

    async with BleakScanner(on_report, service_uuids=[SERVICE], bluez={"adapter": ADAPTER}):
        await asyncio.wait_for(found.wait(), DEADLINE)
    device, adv = seen["device"], seen["adv"]
    check(SERVICE in adv.service_uuids, f"service_uuids {adv.service_uuids}")
    check(device.details["path"].startswith(f"/org/bluez/{ADAPTER}/"), f"path {device.details['path']}")
    print(f"ok: scan found {device.address} {adv.local_name} uuids={adv.service_uuids}")
    return device


async def collect(client, uuid, count, use_start_notify):
    """start_notify until `count` values arrive; returns them."""
    received = []
    enough = asyncio.Event()

    def on_value(_characteristic, data):
        received.append(bytes(data))
        if len(received) >= count:
            enough.set()

    await client.start_notify(uuid, on_value, bluez={"use_start_notify": use_start_notify})
    characteristic = client.services.get_characteristic(uuid)
    # Bleak keeps the AcquireNotify socket per characteristic path: proves which D-Bus method it used.
    acquired = characteristic.obj[0] in client._backend._notification_fds
    check(acquired != use_start_notify, f"use_start_notify={use_start_notify} but acquired={acquired}")
    await asyncio.wait_for(enough.wait(), DEADLINE)
    await client.stop_notify(uuid)
    return received


async def gatt(device):
    disconnected = asyncio.Event()
    async with BleakClient(device, disconnected_callback=lambda _c: disconnected.set(), timeout=DEADLINE) as client:
        uuids = {service.uuid for service in client.services}
        check(SERVICE in uuids, f"services {uuids}")
        print(f"ok: connected, services {sorted(uuids)}")

        check(await client.read_gatt_char(DATA) == b"\x00", "initial data")
        await client.write_gatt_char(DATA, b"with response", response=True)
        check(await client.read_gatt_char(DATA) == b"with response", "data after write with response")
        await client.write_gatt_char(DATA, b"\x2a", response=False)
        # A command has no reply; the read that follows is queued behind it on the same link.
        check(await client.read_gatt_char(DATA) == b"\x2a", "data after write without response")
        print("ok: read; write with response read back; write without response read back")

        for use_start_notify in (False, True):
            values = await collect(client, PULSE, 3, use_start_notify)
            check(all(len(v) == 1 for v in values), f"pulse values {values}")
            method = "StartNotify" if use_start_notify else "AcquireNotify"
            print(f"ok: {method}: pulse {[v.hex() for v in values[:3]]}")

        values = await collect(client, STREAM, 3, False)
        check(all(v[:1] == b"\x10" for v in values), f"stream values {values}")
        print(f"ok: AcquireNotify to the application's own AcquireNotify socket: {[v.hex() for v in values[:3]]}")

        values = await collect(client, ALERT, 3, True)
        print(f"ok: indications {[v.hex() for v in values[:3]]}")

        await client.write_gatt_char(SINK, b"\x55", response=False)
        print("ok: write without response to the application's AcquireWrite socket")
    await asyncio.wait_for(disconnected.wait(), DEADLINE)
    check(not client.is_connected, "still connected after disconnect")
    print("ok: disconnected")


async def main():
    versions = {name: importlib.metadata.version(name) for name in ("bleak", "dbus-fast")}
    print(f"bleak {versions['bleak']}, dbus-fast {versions['dbus-fast']}, Python {sys.version.split()[0]}")
    device = await scan()
    await gatt(device)


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except BaseException as error:  # noqa: BLE001 - report anything, then fail
        print(f"FAIL: {type(error).__name__}: {error}")
        sys.exit(1)
