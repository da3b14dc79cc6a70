#!/usr/bin/env python3
"""Advertisement ingest of the central role beside Bleak, on one simulated air (a measurement, not a test).

Starts bleagent (central role, Diagnostics plugin, `backend: sim`: its own private bus and blesim) with a scenario
of N advertisers every INTERVAL ms (one `repeat` entry, docs/blesim.md "Load: repeat"), calls
`central.scan.start {"allowDuplicates": true}`, attaches Bleak's BleakScanner to the same bus (a child process,
counting detection callbacks), and after a warm-up measures for SECONDS: reports handled per second, CPU seconds
per 10,000 reports (utime + stime from /proc/<pid>/stat) and RSS, for the agent and for Bleak.

The agent's reports: the sum of `reports` over `central.stats`'s control scan when the agent has that method,
else the `discovered` events read from an `events.subscribe` connection (`--events` forces that).

    swift build -c release
    . scripts/bleak-venv.sh; ensure_bleak_venv
    .build/venv-bleak/bin/python scripts/ingest-profile.py --devices 1000 --seconds 20
    .build/venv-bleak/bin/python scripts/ingest-profile.py --devices 10000 --interval-ms 10000 --seconds 300 --rss-every 10

`--notifiers N` measures notifications instead: N connectable devices, each with a Heart Rate Measurement
(2A37) that notifies every `--every-ms` ms; the agent connects and `central.subscribe`s each. `--transport
startnotify` lets Bleak connect and StartNotify first (blesim then answers the agent's AcquireNotify with
InProgress, so both receive the same PropertiesChanged signals); `--transport acquire` has the agent alone, on
AcquireNotify sockets. The agent's count is `central.stats`'s delivered notifications.

`--perf FILE` records the agent with `perf record -g` during the window (`perf report -i FILE`).
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Control:
    """One JSON-RPC connection to the agent's control socket."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.buffer = b""
        self.next = 0
        self.events = 0

    def lines(self):
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise EOFError("agent closed the connection")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line

    def call(self, method, params=None):
        self.next += 1
        request = {"jsonrpc": "2.0", "id": self.next, "method": method}
        if params is not None:
            request["params"] = params
        self.sock.sendall(json.dumps(request).encode() + b"\n")
        while True:
            message = json.loads(self.lines())
            if message.get("id") == self.next:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]
            self.events += 1

    def count_events(self, until):
        """Counts event lines until the monotonic time `until`."""
        self.sock.settimeout(0.2)
        while time.monotonic() < until:
            try:
                chunk = self.sock.recv(1 << 20)
            except socket.timeout:
                continue
            if not chunk:
                break
            self.events += chunk.count(b"\n")
        self.sock.settimeout(None)


def bleak_child(seconds, addresses):
    import asyncio

    from bleak import BleakClient, BleakScanner

    count = 0

    def seen(device, advertisement):
        nonlocal count
        count += 1

    def notified(characteristic, value):
        nonlocal count
        count += 1

    async def report():
        print("ready", flush=True)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            await asyncio.sleep(0.5)
            print(count, flush=True)

    async def scan():
        async with BleakScanner(detection_callback=seen):
            await report()

    async def notify():
        clients = []
        for address in addresses:
            device = await BleakScanner.find_device_by_address(address, timeout=30)
            client = BleakClient(device)
            await client.connect()
            await client.start_notify("00002a37-0000-1000-8000-00805f9b34fb", notified)
            clients.append(client)
        await report()

    asyncio.run(notify() if addresses else scan())


def notifier_address(index):
    return f"D0:00:00:00:{index >> 8:02X}:{index & 0xFF:02X}"


def notifiers(count, every):
    return {
        "adapters": 1,
        "devices": [
            {
                "address": notifier_address(index),
                "addressType": "random",
                "intervalMs": 50,
                "advertising": {"name": f"N{index}", "serviceUUIDs": ["180D"]},
                "rssi": {"distance": 1},
                "gatt": {"services": [{"uuid": "180D", "characteristics": [{
                    "uuid": "2A37", "flags": ["notify"], "value": "0600",
                    "behaviour": {"counter": {"start": 0, "step": 1, "format": "uint16"}, "everyMs": every}}]}]},
            }
            for index in range(count)
        ],
    }


def scenario(devices, interval):
    return {
        "adapters": 1,
        "temporaryTimeout": 30,
        "devices": [
            {
                "address": "C0:00:00:00:00:00",
                "addressType": "random",
                "intervalMs": interval,
                "advertising": {
                    "name": "D{n}",
                    "serviceUUIDs": ["180D"],
                    "manufacturerData": [{"company": 76, "data": "0102"}],
                },
                "rssi": {"distance": 2, "noise": 3},
                "repeat": {"count": devices},
            }
        ],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--devices", type=int, default=1000)
    parser.add_argument("--interval-ms", type=int, default=20)
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--bin", default=".build/release")
    parser.add_argument("--events", action="store_true", help="count discovered events even if central.stats exists")
    parser.add_argument("--no-bleak", action="store_true")
    parser.add_argument("--perf", help="perf record -g the agent during the window into this file")
    parser.add_argument("--rss-every", type=float, default=2.0, help="seconds between RSS samples")
    parser.add_argument("--time-to-list", action="store_true", help="time until central.devices lists every device")
    parser.add_argument("--notifiers", type=int, default=0)
    parser.add_argument("--every-ms", type=int, default=1)
    parser.add_argument("--transport", choices=["startnotify", "acquire"], default="startnotify")
    parser.add_argument("--bleak-child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--address", action="append", default=[], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bleak_child is not None:
        bleak_child(args.bleak_child, args.address)
        return

    binaries = os.path.abspath(args.bin)
    work = tempfile.mkdtemp(prefix="ingest-", dir="/tmp")
    with open(f"{work}/scenario.json", "w") as f:
        if args.notifiers:
            json.dump(notifiers(args.notifiers, args.every_ms), f)
        else:
            json.dump(scenario(args.devices, args.interval_ms), f)
    config = {
        "version": 1,
        "role": "central",
        "backend": "sim",
        "adapter": "hci0",
        "control": {"socket": f"{work}/control.sock", "mode": "0600", "allowedUids": []},
        "restore": {"identifier": "profile", "stateDirectory": f"{work}/state"},
        "pluginDirectory": binaries,
        "sim": {"binary": f"{binaries}/blesim", "scenario": f"{work}/scenario.json"},
        "roles": {"central": {"plugin": "Diagnostics", "config": {"heartbeatSeconds": 0}}},
    }
    with open(f"{work}/roles.json", "w") as f:
        json.dump(config, f)
    agent = subprocess.Popen(
        [f"{binaries}/bleagent", "--config", f"{work}/roles.json"], stderr=open(f"{work}/agent.log", "w")
    )
    children = [agent]
    try:
        run(args, work, agent, children)
    finally:
        for child in reversed(children):
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
                try:
                    child.wait(10)
                except subprocess.TimeoutExpired:
                    child.kill()
        shutil.rmtree(work, ignore_errors=True)


def subscribe_all(control, count):
    """Scans until every notifier is listed, then connects and subscribes to each one's 2A37."""
    control.call("central.scan.start", {"services": ["180d"]})
    deadline = time.monotonic() + 60
    while True:
        devices = {d["name"]: d["id"] for d in control.call("central.devices")["devices"] if d["name"]}
        if all(f"N{index}" in devices for index in range(count)):
            break
        if time.monotonic() > deadline:
            sys.exit(f"only {len(devices)} notifiers found")
        time.sleep(0.2)
    control.call("central.scan.stop")
    for index in range(count):
        control.call("central.connect", {"id": devices[f"N{index}"]})
        control.call("central.subscribe", {"id": devices[f"N{index}"], "characteristic": "2a37"})


def run(args, work, agent, children):
    deadline = time.monotonic() + 60
    control = None
    while control is None:
        try:
            control = Control(f"{work}/control.sock")
        except OSError:
            if agent.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"the agent did not start; see its log:\n{open(f'{work}/agent.log').read()}")
            time.sleep(0.1)
    while True:
        status = control.call("agent.status")
        if status["roleState"]["state"] == "running":
            ble = control.call("diag.ble")
            if ble.get("state") == "poweredOn":
                break
        if time.monotonic() > deadline:
            sys.exit(f"the central did not power on: {status}")
        time.sleep(0.1)
    bus = status["sim"]["busAddress"]
    methods = control.call("agent.methods")
    use_stats = "central.stats" in methods and not args.events

    bleak = None
    addresses = [notifier_address(index) for index in range(args.notifiers)]
    if not args.no_bleak and not (args.notifiers and args.transport == "acquire"):
        environment = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=bus)
        command = [sys.executable, os.path.abspath(__file__), "--bleak-child", str(args.warmup + args.seconds + 60)]
        for address in addresses:
            command += ["--address", address]
        bleak = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=environment)
        children.append(bleak)
        if bleak.stdout.readline().strip() != "ready":
            sys.exit("Bleak did not start")

    events = None
    if not use_stats:
        events = Control(f"{work}/control.sock")
        events.call("events.subscribe", {"kinds": ["value" if args.notifiers else "discovered"]})
    if args.notifiers:
        subscribe_all(control, args.notifiers)
    else:
        control.call("central.scan.start", {"allowDuplicates": True})
        if args.time_to_list:
            scan_started = time.monotonic()
            while True:
                listed = len(control.call("central.devices")["devices"])
                if listed >= args.devices or time.monotonic() - scan_started > 120:
                    break
                time.sleep(0.5)
            print(f"central.devices listed {listed} of {args.devices} {time.monotonic() - scan_started:.1f} s "
                  "after central.scan.start")
    time.sleep(args.warmup)

    def agent_reports():
        if use_stats:
            stats = control.call("central.stats")
            agent_reports.signals = stats["manager"]["events"]
            if args.notifiers:
                return stats["manager"]["notifications"]["delivered"]
            return stats["controlScan"]["reports"]
        return events.events

    agent_reports.signals = 0

    def bleak_count():
        last = None
        if bleak is None:
            return 0
        # The child prints its running count twice a second; the latest line wins.
        os.set_blocking(bleak.stdout.fileno(), False)
        while True:
            line = bleak.stdout.readline()
            if not line:
                break
            last = int(line)
        os.set_blocking(bleak.stdout.fileno(), True)
        if last is None:
            last = int(bleak.stdout.readline())
        return last

    helpers = {}
    for pid in subprocess.run(["pgrep", "-P", str(agent.pid)], capture_output=True, text=True).stdout.split():
        with open(f"/proc/{pid}/comm") as f:
            helpers[f.read().strip()] = int(pid)
    helper_cpu0 = {name: cpu_seconds(pid) for name, pid in helpers.items()}
    perf = None
    if args.perf:
        perf = subprocess.Popen(
            ["perf", "record", "-g", "-o", args.perf, "-p", str(agent.pid), "--", "sleep", str(args.seconds)],
            stderr=subprocess.DEVNULL,
        )
    if events is not None:
        events.count_events(time.monotonic() + 0.5)
    start = time.monotonic()
    reports0, bleak0 = agent_reports(), bleak_count()
    signals0 = agent_reports.signals
    cpu0 = cpu_seconds(agent.pid)
    bleak_cpu0 = cpu_seconds(bleak.pid) if bleak else 0
    samples = []
    end = start + args.seconds
    while time.monotonic() < end:
        step = min(args.rss_every, end - time.monotonic())
        if events is not None:
            events.count_events(time.monotonic() + step)
        else:
            time.sleep(max(0, step))
        samples.append((round(time.monotonic() - start, 1), round(rss_mib(agent.pid), 1)))
    elapsed = time.monotonic() - start
    reports = agent_reports() - reports0
    signals = agent_reports.signals - signals0
    bleak_reports = bleak_count() - bleak0
    cpu = cpu_seconds(agent.pid) - cpu0
    bleak_cpu = (cpu_seconds(bleak.pid) - bleak_cpu0) if bleak else 0
    helper_cpu = {name: cpu_seconds(pid) - helper_cpu0[name] for name, pid in helpers.items()}
    if perf:
        perf.wait()
    devices = len(control.call("central.devices")["devices"])
    stats = control.call("central.stats") if "central.stats" in methods else None

    if args.notifiers:
        offered = args.notifiers * 1000 / args.every_ms
        print(f"notifiers {args.notifiers} every {args.every_ms} ms ({args.transport}): offered {offered:,.0f}/s; "
              f"window {elapsed:.1f} s; load {os.getloadavg()[0]:.1f}")
    else:
        # BLE, and blesim, add a random advDelay of 0 to 10 ms (5 on average) to every advertising interval.
        offered = args.devices * 1000 / (args.interval_ms + 5)
        print(f"devices {args.devices} every {args.interval_ms} ms (+ advDelay): "
              f"offered about {offered:,.0f} reports/s; "
              f"window {elapsed:.1f} s; load {os.getloadavg()[0]:.1f}")
    print(f"{'':8} {'events/s':>10} {'CPU s/10k':>10} {'CPU %':>6} {'RSS MiB':>8}")
    agent_rate = reports / elapsed
    print(f"{'bleagent':8} {agent_rate:>10,.0f} {cpu / max(reports, 1) * 1e4:>10.3f} {cpu / elapsed * 100:>6.1f} "
          f"{rss_mib(agent.pid):>8.1f}")
    if bleak:
        bleak_rate = bleak_reports / elapsed
        print(f"{'Bleak':8} {bleak_rate:>10,.0f} {bleak_cpu / max(bleak_reports, 1) * 1e4:>10.3f} "
              f"{bleak_cpu / elapsed * 100:>6.1f} {rss_mib(bleak.pid):>8.1f}")
        if reports and bleak_reports:
            ratio = (cpu / reports) / max(bleak_cpu / bleak_reports, 1e-12)
            print(f"CPU per report, bleagent / Bleak: {ratio:.2f}")
    print("CPU % of the agent's children: " + ", ".join(f"{n} {c / elapsed * 100:.1f}" for n, c in helper_cpu.items()))
    if use_stats:
        print(f"signals the agent's manager handled: {signals / elapsed:,.0f}/s")
    print(f"central.devices lists {devices}")
    print("agent RSS (s, MiB): " + " ".join(f"{t}:{r}" for t, r in samples))
    if stats is not None:
        print("central.stats: " + json.dumps(stats, sort_keys=True))


if __name__ == "__main__":
    main()
