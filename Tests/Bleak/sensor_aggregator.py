"""Bleak (PyPI, unmodified) as a central against bleagent's SensorAggregator plugin.

Run by Tests/BlectlTests/SensorAggregatorBleakTests.swift with DBUS_SYSTEM_BUS_ADDRESS pointing at the agent's
embedded blesim: the agent advertises and serves GATT on hci0, this script is a central on hci1 of the same air.

    sensor_aggregator.py INGEST_SOCKET [--acquire-notify]

--acquire-notify adds a second round of notifications through AcquireNotify (Bleak's use_start_notify False): the
central's AcquireNotify reaches the agent as StartNotify, and the notifications arrive on the socket.

Readings are driven through the agent's ingest socket (Unix datagrams, one JSON line each). The BTHome service
data (0xFCD2) is decoded with Home Assistant's own parser, `bthome-ble` (PyPI, pinned in the venv), not by this
script. Prints one "ok:" line per step; any failed check prints "FAIL:" and exits 1. Every wait is on an event with
a generous deadline, never a fixed sleep.
"""

import asyncio
import importlib.metadata
import json
import socket
import sys
import time

from bleak import BleakClient, BleakScanner
from dbus_fast import BusType, Message, MessageType
from dbus_fast.aio import MessageBus
from bluetooth_sensor_state_data import BluetoothServiceInfoBleak
from bthome_ble import BTHomeBluetoothDeviceData

ADAPTER = "hci1"
# A second central on the same air, connected to the node but subscribed to nothing at first.
OTHER_ADAPTER = "hci2"
ESS = "0000181a-0000-1000-8000-00805f9b34fb"
BTHOME = "0000fcd2-0000-1000-8000-00805f9b34fb"
TEMPERATURE = "00002a6e-0000-1000-8000-00805f9b34fb"
ES_MEASUREMENT = "0000290c-0000-1000-8000-00805f9b34fb"
SUMMARY = "07140ec1-d234-4118-a438-685945414e79"
# What the agent's readings are once the script has sent the temperature: the values of the docs' BTHome fixture.
EXPECTED = {"temperature": 23.14, "humidity": 46.65, "pressure": 1013.17, "battery": 87}
# Readings sent while subscribed (each beyond the sensor's notifyDelta of 0.5), and their 2A6E encodings.
CHANGES = [25.00, 26.50, 24.00]
DEADLINE = 30.0


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def temperature_bytes(celsius):
    return round(celsius * 100).to_bytes(2, "little", signed=True)


class Ingest:
    """The agent's ingest socket: one JSON line per datagram."""

    def __init__(self, path):
        self.path = path
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)

    def send(self, sensor, value):
        self.socket.sendto(json.dumps({"sensor": sensor, "value": value}).encode() + b"\n", self.path)


def decode_bthome(device, adv):
    """Home Assistant's BTHome parser, fed the way HA's Bluetooth integration feeds it (from_scan)."""
    info = BluetoothServiceInfoBleak.from_scan(ADAPTER, device, adv, time.monotonic(), True)
    parser = BTHomeBluetoothDeviceData()
    if not parser.supported(info):
        return None
    update = parser.update(info)
    return {key.key: value.native_value for key, value in update.entity_values.items() if key.key in EXPECTED}


async def scan():
    """A scan filtered on ESS sees the node's BTHome service data; bthome-ble decodes it to the readings."""
    reports = []
    found = asyncio.Event()

    def on_report(device, adv):
        if BTHOME not in adv.service_data:
            return
        decoded = decode_bthome(device, adv)
        reports.append((device, adv, decoded))
        if decoded == EXPECTED:
            found.set()

    async with BleakScanner(on_report, service_uuids=[ESS], bluez={"adapter": ADAPTER}):
        try:
            await asyncio.wait_for(found.wait(), DEADLINE)
        except asyncio.TimeoutError:
            raise AssertionError(f"no advertisement decoded to {EXPECTED}; decoded: {[r[2] for r in reports]}")
    device, adv, decoded = reports[-1]
    check(adv.local_name == "gw-1", f"local_name {adv.local_name!r}")
    check(ESS in adv.service_uuids, f"service_uuids {adv.service_uuids}")
    print(f"ok: scan found {device.address} {adv.local_name} BTHome {adv.service_data[BTHOME].hex()} "
          f"decoded by bthome-ble {importlib.metadata.version('bthome-ble')}: {decoded}")
    return device


async def notifications(client, ingest, use_start_notify):
    """Subscribed, the central gets the current value at once, then each reading sent through the ingest socket."""
    received = []
    arrived = asyncio.Event()

    def on_value(_characteristic, data):
        received.append(bytes(data))
        arrived.set()

    async def next_value():
        try:
            await asyncio.wait_for(arrived.wait(), DEADLINE)
        except asyncio.TimeoutError:
            raise AssertionError(f"no notification within {DEADLINE} s; so far {[r.hex() for r in received]}")
        arrived.clear()
        return received[-1]

    await client.start_notify(TEMPERATURE, on_value, bluez={"use_start_notify": use_start_notify})
    characteristic = client.services.get_characteristic(TEMPERATURE)
    # Bleak keeps the AcquireNotify socket per characteristic path: proves which D-Bus method it used.
    acquired = characteristic.obj[0] in client._backend._notification_fds
    check(acquired != use_start_notify, f"use_start_notify={use_start_notify} but acquired={acquired}")
    current = await next_value()
    sent = []
    for celsius in CHANGES:
        ingest.send("room", celsius)
        sent.append(temperature_bytes(celsius))
        while await next_value() != sent[-1]:
            pass
    await client.stop_notify(TEMPERATURE)
    check(received[0] == current and received[-1] == sent[-1], f"received {[r.hex() for r in received]}")
    # A value may come twice in a row: BlueZ's StartNotify does not say which central enabled notifications, so the
    # node sends the current value to every subscriber on each enabling, and an enabling it learns of after a
    # reading went out repeats that reading. Order is what counts, and nothing may be missing.
    readings = [r for r in received[1:] if r in sent]
    in_order = [r for index, r in enumerate(readings) if index == 0 or r != readings[index - 1]]
    check(in_order == sent, f"out of order: {[r.hex() for r in received]}")
    method = "StartNotify" if use_start_notify else "AcquireNotify"
    print(f"ok: {method}: {len(received)} notifications {[r.hex() for r in received]} for readings {CHANGES}")
    # Back to the fixture's value for the next variant.
    ingest.send("room", EXPECTED["temperature"])


class ValueWatch:
    """Every Value change blesim signals for a set of characteristic objects, on a D-Bus connection of its own
    (whatever Bleak filters, this sees what went on the bus)."""

    def __init__(self, paths):
        self.values = {path: [] for path in paths}
        self.bus = None

    async def start(self):
        self.bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
        rule = "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'"
        await self.bus.call(Message(
            destination="org.freedesktop.DBus", path="/org/freedesktop/DBus", interface="org.freedesktop.DBus",
            member="AddMatch", signature="s", body=[rule]))
        self.bus.add_message_handler(self.on_message)

    def on_message(self, message):
        if message.message_type == MessageType.SIGNAL and message.path in self.values:
            _interface, changed, _invalidated = message.body
            if "Value" in changed:
                self.values[message.path].append(bytes(changed["Value"].value))

    async def barrier(self, path):
        """A round trip to blesim: every signal it sent before answering has reached this connection (one ordered
        connection from blesim through the bus). Returns the object's Notifying."""
        reply = await self.bus.call(Message(
            destination="org.bluez", path=path, interface="org.freedesktop.DBus.Properties", member="Get",
            signature="ss", body=["org.bluez.GattCharacteristic1", "Notifying"]))
        check(reply.message_type == MessageType.METHOD_RETURN, f"Get Notifying: {reply.body}")
        return reply.body[0].value


async def only_subscribed(client, other, ingest):
    """A reading goes to the subscribed central only: the other central, connected to the node too, gets no Value
    until it subscribes itself."""
    mine = client.services.get_characteristic(TEMPERATURE).obj[0]
    theirs = other.services.get_characteristic(TEMPERATURE).obj[0]
    watch = ValueWatch([mine, theirs])
    await watch.start()
    queues = {"mine": asyncio.Queue(), "theirs": asyncio.Queue()}

    async def expect(name, value):
        while True:
            got = await asyncio.wait_for(queues[name].get(), DEADLINE)
            if got == value:
                return

    await client.start_notify(TEMPERATURE, lambda _c, d: queues["mine"].put_nowait(bytes(d)))
    ingest.send("room", 27.5)
    await expect("mine", temperature_bytes(27.5))
    check(await watch.barrier(theirs) is False, "the other central's characteristic is notifying")
    check(temperature_bytes(27.5) in watch.values[mine], f"the watch saw no Value on {mine}: {watch.values}")
    check(watch.values[theirs] == [], f"the unsubscribed central got {[v.hex() for v in watch.values[theirs]]}")

    await other.start_notify(TEMPERATURE, lambda _c, d: queues["theirs"].put_nowait(bytes(d)))
    ingest.send("room", 29.0)
    await expect("mine", temperature_bytes(29.0))
    await expect("theirs", temperature_bytes(29.0))
    await other.stop_notify(TEMPERATURE)
    await client.stop_notify(TEMPERATURE)
    # Subscribed, it may also get the current value at once (blesim tells the agent of each enabling, and the agent
    # sends a new subscriber the current value); it ends with the new reading.
    check(watch.values[theirs][-1:] == [temperature_bytes(29.0)], f"the other central got {watch.values[theirs]}")
    watch.bus.disconnect()
    print(f"ok: only subscribed centrals: {ADAPTER} (subscribed) got {[v.hex() for v in watch.values[mine]]}, "
          f"{OTHER_ADAPTER} (connected) got nothing until it subscribed, then {[v.hex() for v in watch.values[theirs]]}")


async def gatt(device, ingest, variants):
    disconnected = asyncio.Event()
    async with BleakClient(
        device, disconnected_callback=lambda _c: disconnected.set(), timeout=DEADLINE, bluez={"adapter": ADAPTER}
    ) as client:
        check(client.is_connected, "not connected")
        uuids = {service.uuid for service in client.services}
        check(ESS in uuids, f"services {uuids}")
        print(f"ok: connected, services {sorted(uuids)}")

        value = await client.read_gatt_char(TEMPERATURE)
        check(value == temperature_bytes(EXPECTED["temperature"]), f"Temperature {value.hex()}")
        descriptor = client.services.get_characteristic(TEMPERATURE).get_descriptor(ES_MEASUREMENT)
        check(descriptor is not None, "no ES Measurement descriptor")
        measurement = await client.read_gatt_descriptor(descriptor.handle)
        check(len(measurement) == 11, f"ES Measurement {measurement.hex()}")
        summary = await client.read_gatt_char(SUMMARY)
        check(summary[0] == 1 and len(summary) == 2 + 26 * summary[1], f"Summary {summary.hex()}")
        print(f"ok: read Temperature {value.hex()} = {int.from_bytes(value, 'little', signed=True) / 100} degC, "
              f"ES Measurement {measurement.hex()}, Summary of {summary[1]} windows ({len(summary)} bytes)")

        for use_start_notify in variants:
            await notifications(client, ingest, use_start_notify)

        async with BleakClient(device.address, timeout=DEADLINE, bluez={"adapter": OTHER_ADAPTER}) as other:
            await only_subscribed(client, other, ingest)
    await asyncio.wait_for(disconnected.wait(), DEADLINE)
    check(not client.is_connected, "still connected after disconnect")
    print("ok: disconnected")


async def main():
    names = ("bleak", "dbus-fast", "bthome-ble")
    versions = ", ".join(f"{name} {importlib.metadata.version(name)}" for name in names)
    print(f"{versions}, Python {sys.version.split()[0]}")
    ingest = Ingest(sys.argv[1])
    variants = [True] + ([False] if "--acquire-notify" in sys.argv[2:] else [])
    ingest.send("room", EXPECTED["temperature"])
    device = await scan()
    await gatt(device, ingest, variants)


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except BaseException as error:  # noqa: BLE001 - report anything, then fail
        print(f"FAIL: {type(error).__name__}: {error}")
        sys.exit(1)
