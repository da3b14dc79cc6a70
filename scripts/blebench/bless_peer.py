"""blebench's bless peer (bless from the bench venv, unmodified): a GATT server with the bench service (a notify
characteristic and a write-without-response one), advertised on ADAPTER; it notifies at a rate and records the
writes it receives. Driven by blebench through command lines (benchlib.serve).

Usage: bless_peer.py ADAPTER
"""

import asyncio
import fcntl
import struct
import sys
import termios

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
    bus = server.bus

    def unsent_bytes():
        # SIOCOUTQ (= TIOCOUTQ): bytes in the bus socket's send queue that the daemon has not read yet.
        return struct.unpack("i", fcntl.ioctl(bus._sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0"))[0]

    async def notify(count, rate, seconds):
        async def send(sequence):
            # bless sends each PropertiesChanged without waiting, and dbus-next 0.2.3 drops the whole bus
            # connection when a write to its socket would block (EAGAIN is caught as a failure). So the peer
            # keeps its own flow control: a value goes out only when dbus-next's queue is empty and the socket's
            # send queue holds less than 64 KiB (a third of the default buffer).
            while bus._writer.messages.qsize() > 0:
                await asyncio.sleep(0)  # one turn of the loop: dbus-next's writer runs
            while unsent_bytes() > 65536:
                await asyncio.sleep(0.0005)
            characteristic.value = bytearray(benchlib.encode(sequence))
            server.update_value(benchlib.SERVICE, benchlib.NOTIFY)

        sent, elapsed = await benchlib.paced(int(count), int(rate), float(seconds), send)
        return f"sent {sent} {elapsed:.6f}"

    async def window():
        return "window " + writes.take()

    async def subscribers():
        return f"subscribers {len(server.app.subscribed_characteristics)}"

    await benchlib.serve({"notify": notify, "window": window, "subscribers": subscribers})
    await server.stop()


asyncio.run(main())
