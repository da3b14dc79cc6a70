"""Bleak (PyPI, unmodified) as a central against blesim, using the scenario Tests/Bleak/heart-rate.json.

Run by Tests/BleakTests with DBUS_SYSTEM_BUS_ADDRESS pointing at a private bus where blesim serves org.bluez.
Prints one "ok:" line per step; any failed check raises, prints "FAIL:" and exits 1. Every wait is on an event
with a generous deadline, never a fixed sleep.
"""

import asyncio
import importlib.metadata
import sys

from bleak import BleakClient, BleakScanner

HRM_ADDRESS = "D4:48:52:4D:00:0A"
OTHER_ADDRESS = "C0:54:52:4D:00:01"
HEART_RATE = "0000180d-0000-1000-8000-00805f9b34fb"
BATTERY = "0000180f-0000-1000-8000-00805f9b34fb"
HEART_RATE_MEASUREMENT = "00002a37-0000-1000-8000-00805f9b34fb"
BODY_SENSOR_LOCATION = "00002a38-0000-1000-8000-00805f9b34fb"
BATTERY_LEVEL = "00002a19-0000-1000-8000-00805f9b34fb"
NOTE = "12345678-1234-5678-1234-56789abcdef1"
COMMAND = "12345678-1234-5678-1234-56789abcdef2"
CYCLE = {bytes.fromhex(v) for v in ("0648", "064a", "064e", "0651")}
DEADLINE = 30.0
NOTIFICATIONS = 5


def check(condition, message):
    if not condition:
        raise AssertionError(message)


async def scan():
    """A service-filtered scan finds the heart-rate sensor with its advertisement, and never the other device."""
    seen = {}
    found = asyncio.Event()

    def on_report(device, adv):
        seen.setdefault(device.address, []).append((device, adv))
        if device.address == HRM_ADDRESS and len(seen[device.address]) >= 3:
            found.set()

    async with BleakScanner(on_report, service_uuids=[HEART_RATE]):
        await asyncio.wait_for(found.wait(), DEADLINE)
    device, adv = seen[HRM_ADDRESS][-1]
    check(OTHER_ADDRESS not in seen, f"the service filter let {OTHER_ADDRESS} through")
    check(device.name == "HRM-Bleak", f"name {device.name!r}")
    check(adv.local_name == "HRM-Bleak", f"local_name {adv.local_name!r}")
    check(adv.rssi == -62, f"RSSI {adv.rssi}")
    check(set(adv.service_uuids) >= {HEART_RATE, BATTERY}, f"service_uuids {adv.service_uuids}")
    check(adv.manufacturer_data == {0x0059: b"\x01\x02"}, f"manufacturer_data {adv.manufacturer_data}")
    check(adv.service_data == {BATTERY: b"\x5a"}, f"service_data {adv.service_data}")
    check(adv.tx_power == 0, f"tx_power {adv.tx_power}")
    print(f"ok: scan found {device.address} {adv.local_name} rssi={adv.rssi} uuids={sorted(adv.service_uuids)} "
          f"mfr={adv.manufacturer_data} svc={adv.service_data}; {OTHER_ADDRESS} filtered out")
    return device


async def notifications(client, use_start_notify):
    """start_notify delivers several Heart Rate Measurements, through StartNotify or AcquireNotify."""
    received = []
    enough = asyncio.Event()

    def on_value(_characteristic, data):
        received.append(bytes(data))
        if len(received) >= NOTIFICATIONS:
            enough.set()

    await client.start_notify(HEART_RATE_MEASUREMENT, on_value, bluez={"use_start_notify": use_start_notify})
    characteristic = client.services.get_characteristic(HEART_RATE_MEASUREMENT)
    # Bleak keeps the AcquireNotify socket per characteristic path: proves which D-Bus method it used.
    acquired = characteristic.obj[0] in client._backend._notification_fds
    check(acquired != use_start_notify, f"use_start_notify={use_start_notify} but acquired={acquired}")
    await asyncio.wait_for(enough.wait(), DEADLINE)
    await client.stop_notify(HEART_RATE_MEASUREMENT)
    check(set(received) <= CYCLE, f"unexpected measurements {received}")
    method = "StartNotify" if use_start_notify else "AcquireNotify"
    print(f"ok: {method}: {len(received)} Heart Rate Measurements {[r.hex() for r in received[:NOTIFICATIONS]]}")


async def gatt(device):
    disconnected = asyncio.Event()
    async with BleakClient(device, disconnected_callback=lambda _c: disconnected.set(), timeout=DEADLINE) as client:
        check(client.is_connected, "not connected")
        uuids = {service.uuid for service in client.services}
        check({HEART_RATE, BATTERY} <= uuids, f"services {uuids}")
        print(f"ok: connected, services {sorted(uuids)}")

        battery = await client.read_gatt_char(BATTERY_LEVEL)
        check(battery == bytes([87]), f"Battery Level {battery.hex()}")
        location = await client.read_gatt_char(BODY_SENSOR_LOCATION)
        check(location == bytes([2]), f"Body Sensor Location {location.hex()}")
        print(f"ok: read Battery Level {battery[0]}%, Body Sensor Location {location[0]}")

        await client.write_gatt_char(NOTE, b"written by bleak", response=True)
        note = await client.read_gatt_char(NOTE)
        check(note == b"written by bleak", f"note after write with response {note!r}")
        await client.write_gatt_char(COMMAND, b"\x2a", response=False)
        # A command has no reply; the read that follows is queued behind it on the same link.
        command = await client.read_gatt_char(COMMAND)
        check(command == b"\x2a", f"value after write without response {command.hex()}")
        print("ok: write with response read back; write without response read back")

        # Bleak's way to learn the MTU on BlueZ: AcquireWrite on the first write-without-response characteristic,
        # whose reply carries the link's MTU (the scenario default, 247); it closes the socket at once.
        await client._backend._acquire_mtu()
        check(client.mtu_size == 247, f"MTU {client.mtu_size}")
        print(f"ok: AcquireWrite gave MTU {client.mtu_size}")

        await notifications(client, use_start_notify=False)
        await notifications(client, use_start_notify=True)
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
