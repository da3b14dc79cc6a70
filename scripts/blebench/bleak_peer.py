"""blebench's Bleak peer (Bleak from the bench venv, unmodified): a scanner counting detection callbacks, and a
central that connects to the bench peripheral (bless's, on another adapter), receives its notifications and writes
to it without response. Driven by blebench through command lines (benchlib.serve).

Usage: bleak_peer.py ADAPTER
"""

import asyncio
import sys

from bleak import BleakClient, BleakScanner

import benchlib

adapter = sys.argv[1]
state = {"reports": 0, "scanner": None, "client": None, "window": benchlib.Window()}


def on_report(_device, _advertisement):
    state["reports"] += 1


async def scan():
    # DuplicateData: every advertisement is a report, as the agent's allowDuplicates scan asks.
    state["scanner"] = BleakScanner(on_report, bluez={"adapter": adapter, "filters": {"DuplicateData": True}})
    await state["scanner"].start()
    return "scanning"


async def count():
    return f"count {state['reports']}"


async def unscan():
    await state["scanner"].stop()
    return f"unscanned {state['reports']}"


async def connect():
    device = await BleakScanner.find_device_by_filter(
        lambda _device, advertisement: benchlib.SERVICE in advertisement.service_uuids, timeout=30,
        bluez={"adapter": adapter})
    if device is None:
        raise RuntimeError("no bench peripheral heard within 30 s")
    client = BleakClient(device, bluez={"adapter": adapter})
    await client.connect()
    state["client"] = client
    return "connected"


async def subscribe(method):
    await state["client"].start_notify(
        benchlib.NOTIFY, lambda _characteristic, data: state["window"].record(data),
        bluez={"use_start_notify": method == "start"})
    return "subscribed"


async def unsubscribe():
    await state["client"].stop_notify(benchlib.NOTIFY)
    return "unsubscribed"


async def window():
    return "window " + state["window"].take()


async def write(count, rate, seconds):
    client = state["client"]

    async def send(sequence):
        await client.write_gatt_char(benchlib.WRITE, benchlib.encode(sequence), response=False)

    sent, elapsed = await benchlib.paced(int(count), int(rate), float(seconds), send)
    return f"wrote {sent} {elapsed:.6f}"


async def main():
    await benchlib.serve({
        "scan": scan, "count": count, "unscan": unscan, "connect": connect, "subscribe": subscribe,
        "unsubscribe": unsubscribe, "window": window, "write": write,
    })
    if state["client"] is not None:
        await state["client"].disconnect()


asyncio.run(main())
