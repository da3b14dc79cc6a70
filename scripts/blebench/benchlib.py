"""What blebench's Python peers share: the command loop on standard input, the bench values and latency windows.

A value is 16 bytes: a sequence number and the sender's time.monotonic_ns() (CLOCK_MONOTONIC), both little-endian
64-bit, as the Bench plugin (plugins/Bench) sends them, so any receiver on the machine measures the latency.
"""

import asyncio
import struct
import sys
import time

SERVICE = "6e6b0001-b1e0-4c8e-9a57-0b2f6c5b0e01"
NOTIFY = "6e6b0002-b1e0-4c8e-9a57-0b2f6c5b0e01"
WRITE = "6e6b0003-b1e0-4c8e-9a57-0b2f6c5b0e01"


def encode(sequence):
    return struct.pack("<QQ", sequence, time.monotonic_ns())


class Window:
    """Values received since the last take(): the count and each latency (microseconds)."""

    def __init__(self):
        self.count = 0
        self.latencies = []

    def record(self, data):
        now = time.monotonic_ns()
        self.count += 1
        if len(data) >= 16:
            self.latencies.append(max(0, now - struct.unpack_from("<Q", data, 8)[0]) / 1000)

    def take(self):
        ordered = sorted(self.latencies)

        def at(share):
            return f"{ordered[min(len(ordered) - 1, int(share * len(ordered)))]:.1f}" if ordered else "-"

        line = f"{self.count} {at(0.5)} {at(0.99)} {ordered[-1] if ordered else '-'}"
        self.__init__()
        return line


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


async def paced(count, rate, seconds, send):
    """Calls `await send(sequence)` up to `count` times within `seconds`, `rate` a second (0: as fast as it goes).

    Returns (sent, elapsed seconds).
    """
    start = time.monotonic()
    sent = 0
    while sent < count and time.monotonic() - start < seconds:
        if rate > 0:
            due = start + sent / rate
            delay = due - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
        await send(sent)
        sent += 1
    return sent, time.monotonic() - start


async def serve(handlers):
    """Reads command lines from standard input and runs handlers[word](*arguments) until "quit" or end of input.

    Each handler returns its answer line. Prints "ready" first.
    """
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    say("ready")
    while True:
        line = await reader.readline()
        if not line:
            return
        word, *arguments = line.decode().split()
        if word == "quit":
            return
        try:
            say(await handlers[word](*arguments))
        except Exception as error:  # the answer names the failure; blebench stops the run with it
            say(f"error {type(error).__name__}: {error}")
