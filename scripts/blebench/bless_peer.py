"""blebench's bless peer (bless from the bench venv, unmodified): a GATT server with the bench service (a notify
characteristic and a write-without-response one), advertised on ADAPTER; it notifies at a rate and records the
writes it receives. Driven by blebench through command lines (benchlib.serve).

Usage: bless_peer.py ADAPTER
"""

import asyncio
import sys

from bless import BlessServer, GATTAttributePermissions, GATTCharacteristicProperties

import benchlib

adapter = sys.argv[1]
writes = benchlib.Window()


async def main():
    # A short name: with the 128-bit service UUID and the flags it fits a legacy advertisement (31 bytes).
    server = BlessServer(name="bb", loop=asyncio.get_running_loop(), adapter=adapter)
    server.read_request_func = lambda characteristic, **_: characteristic.value
    server.write_request_func = lambda _characteristic, value, **_: writes.record(bytes(value))
    await server.add_new_service(benchlib.SERVICE)
    await server.add_new_characteristic(
        benchlib.SERVICE, benchlib.NOTIFY,
        GATTCharacteristicProperties.read | GATTCharacteristicProperties.notify, None,
        GATTAttributePermissions.readable)
    await server.add_new_characteristic(
        benchlib.SERVICE, benchlib.WRITE, GATTCharacteristicProperties.write_without_response, None,
        GATTAttributePermissions.writeable)
    await server.start()
    characteristic = server.get_characteristic(benchlib.NOTIFY)

    async def notify(count, rate, seconds):
        async def send(sequence):
            characteristic.value = bytearray(benchlib.encode(sequence))
            server.update_value(benchlib.SERVICE, benchlib.NOTIFY)
            # bless queues each PropertiesChanged for the bus without waiting, and dbus-next writes one queued
            # message each time the loop turns: one turn per value keeps the queue short (the sender's flow control).
            await asyncio.sleep(0)

        sent, elapsed = await benchlib.paced(int(count), int(rate), float(seconds), send)
        return f"sent {sent} {elapsed:.6f}"

    async def window():
        return "window " + writes.take()

    async def subscribers():
        return f"subscribers {len(server.app.subscribed_characteristics)}"

    await benchlib.serve({"notify": notify, "window": window, "subscribers": subscribers})
    await server.stop()


asyncio.run(main())
