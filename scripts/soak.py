#!/usr/bin/python3
"""The soak: bleagent under a crowded room and a busy control socket for a
long time, sampled, and failed if its footprint grows (docs/soak.md).

Started by scripts/soak.sh (which builds first). The agent runs in the central
role on its embedded simulator, with a scenario of N advertising tags beside a
sensor that notifies every 100 ms. Meanwhile:

- one steady client scans without a filter, connects to the sensor,
  subscribes to its measurement and counts the `value` events;
- C churning clients connect, subscribe to every event, ask for the status
  and the device table, read events for a while and leave (a third of them
  without a word, half way through a request);
- the reloader rewrites the config every R seconds, switching the central
  role between the PaymentTerminalScanner and Diagnostics plugins, and calls
  agent.reload;
- the sampler reads, every S seconds, the agent's RSS, open file descriptors
  and threads (/proc), and from the simulator's dbus-daemon (its Debug.Stats
  interface) the match rules the agent's connection holds and the messages
  queued for it.

After a warm-up, the medians of the first and the last third of the samples
are compared; growth past the allowances printed at the end fails the run
(exit 1), as does the agent exiting or the notifications stopping.
"""

import argparse
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import dbus

SENSOR_ADDRESS = "D4:50:4B:00:00:01"
SENSOR_NAME = "Soak-Sensor"
BUS_KEYS = ("match_rules", "agent_connections")


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", required=True, help="the folder with bleagent, blesim and the plugins")
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--devices", type=int, default=1000, help="advertising tags")
    parser.add_argument("--interval-ms", type=int, default=1000, help="each tag's advertising interval")
    parser.add_argument("--clients", type=int, default=64, help="churning control clients")
    parser.add_argument("--reload-seconds", type=float, default=20)
    parser.add_argument("--sample-seconds", type=float, default=10)
    parser.add_argument("--warmup-seconds", type=float, default=120)
    parser.add_argument("--csv", help="write every sample here")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (logs, configs)")
    return parser.parse_args()


def scenario(devices, interval_ms):
    """The shipped scenario's payment terminals, a fast sensor and the tags."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "sim/scenarios/default.json")) as file:
        shipped = json.load(file)
    terminals = [device for device in shipped["devices"] if "paymentTerminal" in device]
    sensor = {
        "address": SENSOR_ADDRESS, "addressType": "random", "intervalMs": 100,
        "advertising": {"name": SENSOR_NAME, "serviceUUIDs": ["180D"]},
        "rssi": {"distance": 1},
        "gatt": {"services": [{"uuid": "180D", "characteristics": [
            {"uuid": "2A37", "flags": ["notify"], "value": "0648",
             "behaviour": {"counter": {"start": 0, "step": 1, "format": "uint16"}, "everyMs": 100}}]}]},
    }
    tags = {
        "address": "C2:00:00:00:00:00", "addressType": "random", "intervalMs": interval_ms,
        "connectable": False,
        "advertising": {"name": "Tag-{n}", "serviceUUIDs": ["181A"],
                        "serviceData": [{"uuid": "FCD2", "data": "40015702c409"}]},
        "rssi": {"noise": 2}, "repeat": {"count": devices, "distance": [1, 40]},
    }
    return {"seed": 11, "temporaryTimeout": 30, "adapters": 1, "devices": terminals + [sensor, tags]}


def config(work, build, plugin):
    roles = {
        "PaymentTerminalScanner": {"rssiThreshold": -75, "margin": 6, "dwell": 3, "paymentDeadlineSeconds": 30},
        "Diagnostics": {"heartbeatSeconds": 5},
    }
    return {
        "version": 1, "role": "central", "backend": "sim", "adapter": "hci0",
        "restore": {"identifier": "soak", "stateDirectory": os.path.join(work, "state")},
        "control": {"socket": os.path.join(work, "control.sock"), "mode": "0600", "allowedUids": []},
        "pluginDirectory": build,
        "sim": {"scenario": os.path.join(work, "scenario.json"), "readySeconds": 60},
        "roles": {"central": {"plugin": plugin, "config": roles[plugin]}},
    }


def write_atomically(path, text):
    with open(path + ".tmp", "w") as file:
        file.write(text)
    os.replace(path + ".tmp", path)


class Refused(Exception):
    """The agent refused the connection (an error reply without an id), for example at its client limit."""


class Client:
    """One control connection: JSON lines, replies matched by id, events counted."""

    def __init__(self, path, timeout=60):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buffer = b""
        self.next_id = 0
        self.events = {}

    def send(self, method, params=None):
        self.next_id += 1
        request = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            request["params"] = params
        self.sock.sendall((json.dumps(request) + "\n").encode())
        return self.next_id

    def read_message(self):
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("the agent closed the connection")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        message = json.loads(line)
        if message.get("id") is None and "error" in message:
            raise Refused(message["error"].get("message", "refused"))
        if message.get("method") == "event":
            kind = message["params"]["kind"]
            self.events[kind] = self.events.get(kind, 0) + 1
        return message

    def call(self, method, params=None):
        request = self.send(method, params)
        while True:
            message = self.read_message()
            if message.get("id") == request:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    def close(self):
        self.sock.close()


class Counters:
    def __init__(self):
        self.lock = threading.Lock()
        self.values = {}

    def add(self, name, count=1):
        with self.lock:
            self.values[name] = self.values.get(name, 0) + count

    def snapshot(self):
        with self.lock:
            return dict(self.values)


def admitted_client(path, stop, counters, timeout):
    """A connection the agent serves: at its client limit it refuses (and the churning clients keep it
    there), so try again every 100 ms; None once stopped."""
    while not stop.is_set():
        client = Client(path, timeout=timeout)
        try:
            client.call("agent.status")
            return client
        except (Refused, OSError, ConnectionError):
            client.close()
            counters.add("retries at the client limit")
            time.sleep(0.1)
    return None


def steady_client(path, stop, counters):
    """Scans, connects to the sensor, subscribes to its measurement; does it again whenever values stop."""
    while not stop.is_set():
        client = None
        try:
            client = admitted_client(path, stop, counters, timeout=15)
            if client is None:
                return
            client.call("events.subscribe", {"kinds": ["value", "state"]})
            client.call("central.scan.start", {"allowDuplicates": True})
            sensor = None
            deadline = time.monotonic() + 60
            while sensor is None and time.monotonic() < deadline and not stop.is_set():
                devices = client.call("central.devices")["devices"]
                counters.add("devices listed", len(devices))
                sensor = next((d["id"] for d in devices if d.get("name") == SENSOR_NAME), None)
                if sensor is None:
                    time.sleep(1)
            if sensor is None:
                raise RuntimeError("the sensor was not found within 60 s")
            client.call("central.connect", {"id": sensor})
            client.call("central.subscribe", {"id": sensor, "characteristic": "2a37"})
            counters.add("subscriptions")
            while not stop.is_set():
                before = client.events.get("value", 0)
                client.read_message()
                counters.add("values", client.events.get("value", 0) - before)
        except (OSError, RuntimeError, ConnectionError, ValueError, Refused) as error:
            counters.add("steady client restarts")
            counters.last_steady_error = str(error)
            if not stop.is_set():
                time.sleep(1)
        finally:
            if client:
                client.close()


def churning_client(path, stop, counters, seed):
    """Connects, subscribes to every event, asks for the status and devices, reads events, leaves."""
    rng = random.Random(seed)
    while not stop.is_set():
        client = None
        try:
            client = Client(path)
            client.call("events.subscribe")
            client.call("agent.status")
            if rng.random() < 0.34:
                client.send("central.devices")  # and leave before the answer
                counters.add("abrupt leaves")
                continue
            client.call("central.devices")
            client.call("agent.methods")
            until = time.monotonic() + rng.uniform(0.5, 5)
            client.sock.settimeout(1)
            while time.monotonic() < until and not stop.is_set():
                try:
                    client.read_message()
                except socket.timeout:
                    pass
            counters.add("events to churning clients", sum(client.events.values()))
            counters.add("sessions")
        except Refused as error:
            # At the agent's client limit: it says so and closes; come back later.
            counters.add("connections refused")
            counters.last_refusal = str(error)
            time.sleep(rng.uniform(0.5, 2))
        except RuntimeError as error:
            counters.add("failed calls")
            counters.last_failed_call = str(error)
        except (OSError, ConnectionError, ValueError) as error:
            counters.add("connection errors")
            counters.last_connection_error = str(error)
            time.sleep(rng.uniform(0.5, 2))
        finally:
            if client:
                client.close()


def reloader(path, config_path, work, build, interval, stop, counters):
    plugins = ["Diagnostics", "PaymentTerminalScanner"]
    turn = 0
    while not stop.wait(interval):
        plugin = plugins[turn % 2]
        turn += 1
        write_atomically(config_path, json.dumps(config(work, build, plugin), indent=2))
        try:
            client = admitted_client(path, stop, counters, timeout=120)
            if client is None:
                return
            status = client.call("agent.reload")
            client.close()
            state = status.get("roleState", {}).get("state")
            counters.add("reloads" if state == "running" else f"reloads ending {state}")
        except (OSError, RuntimeError, ConnectionError, ValueError, Refused) as error:
            counters.add("failed reloads")
            counters.last_reload_error = str(error)


def proc_status(pid):
    values = {}
    with open(f"/proc/{pid}/status") as file:
        for line in file:
            key, _, value = line.partition(":")
            values[key] = value.strip()
    return values


def sample_process(pid):
    status = proc_status(pid)
    return {
        "rss_kib": int(status["VmRSS"].split()[0]),
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
        "threads": int(status["Threads"]),
    }


def children(pid):
    """Every child of the process (each thread lists the children it started)."""
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/children") as file:
                found += [int(child) for child in file.read().split()]
        except OSError:
            pass
    return found


def process_name(pid):
    with open(f"/proc/{pid}/comm") as file:
        return file.read().strip()


def bus_sample(bus, agent_pid):
    """Match rules and the messages queued for each connection of the agent's process."""
    daemon = bus.get_object("org.freedesktop.DBus", "/org/freedesktop/DBus")
    stats = dbus.Interface(daemon, "org.freedesktop.DBus.Debug.Stats")
    driver = dbus.Interface(daemon, "org.freedesktop.DBus")
    rules = stats.GetAllMatchRules()
    sample = {"match_rules": 0, "agent_connections": 0, "queued_messages": 0, "bus_match_rules": 0}
    for name, names_rules in rules.items():
        sample["bus_match_rules"] += len(names_rules)
        try:
            if driver.GetConnectionUnixProcessID(name) != agent_pid:
                continue
            connection = stats.GetConnectionStats(name)
        except dbus.DBusException:
            continue
        sample["agent_connections"] += 1
        sample["match_rules"] += len(names_rules)
        sample["queued_messages"] += int(connection.get("OutgoingMessages", 0))
    return sample


def median(samples, key):
    return statistics.median(sample[key] for sample in samples)


def main():
    args = parse_arguments()
    build = os.path.abspath(args.build)
    work = tempfile.mkdtemp(prefix="soak.", dir="/tmp")
    config_path = os.path.join(work, "roles.json")
    with open(os.path.join(work, "scenario.json"), "w") as file:
        json.dump(scenario(args.devices, args.interval_ms), file)
    write_atomically(config_path, json.dumps(config(work, build, "PaymentTerminalScanner"), indent=2))
    log_path = os.path.join(work, "agent.log")
    log = open(log_path, "w")
    agent = subprocess.Popen([os.path.join(build, "bleagent"), "--config", config_path], stdout=log, stderr=log)
    path = os.path.join(work, "control.sock")
    stop = threading.Event()
    counters = Counters()
    threads = []
    samples = []
    failures = []
    print(f"soak: {args.devices} tags every {args.interval_ms} ms, {args.clients} churning clients, "
          f"a reload every {args.reload_seconds:g} s, {args.minutes:g} min; work folder {work}", flush=True)
    try:
        status = None
        deadline = time.monotonic() + 120
        while status is None:
            if agent.poll() is not None:
                raise SystemExit(f"soak: bleagent exited with {agent.returncode} at start; see {log_path}")
            try:
                client = Client(path, timeout=10)
                status = client.call("agent.status")
                client.close()
                if "sim" not in status or status.get("roleState", {}).get("state") != "running":
                    status = None
                    raise ConnectionError("starting")
            except (OSError, RuntimeError, ConnectionError, Refused):
                if time.monotonic() > deadline:
                    raise SystemExit(f"soak: the control socket did not answer within 120 s; see {log_path}")
                time.sleep(0.5)
        bus = dbus.bus.BusConnection(status["sim"]["busAddress"])
        blesim = next((child for child in children(agent.pid) if process_name(child) == "blesim"), None)
        daemon = next((child for child in children(agent.pid) if process_name(child).startswith("dbus-daemon")), None)

        threads.append(threading.Thread(target=steady_client, args=(path, stop, counters), daemon=True))
        for index in range(args.clients):
            threads.append(threading.Thread(target=churning_client, args=(path, stop, counters, index), daemon=True))
        threads.append(threading.Thread(
            target=reloader, args=(path, config_path, work, build, args.reload_seconds, stop, counters), daemon=True))
        for thread in threads:
            thread.start()

        start = time.monotonic()
        end = start + args.minutes * 60
        header = (f"{'s':>5} {'rss_MiB':>8} {'fds':>5} {'thr':>4} {'rules':>6} {'conns':>5} {'queued':>6} "
                  f"{'sim_MiB':>8} {'bus_MiB':>8} {'values':>7} {'sessions':>8} {'reloads':>7}")
        print(header, flush=True)
        while time.monotonic() < end:
            time.sleep(args.sample_seconds)
            if agent.poll() is not None:
                failures.append(f"bleagent exited with {agent.returncode} (log: {log_path})")
                break
            sample = {"t": round(time.monotonic() - start)}
            sample.update(sample_process(agent.pid))
            sample.update(bus_sample(bus, agent.pid))
            sample["sim_rss_kib"] = sample_process(blesim)["rss_kib"] if blesim else 0
            sample["bus_rss_kib"] = sample_process(daemon)["rss_kib"] if daemon else 0
            sample.update({key.replace(" ", "_"): value for key, value in counters.snapshot().items()})
            samples.append(sample)
            print(f"{sample['t']:>5} {sample['rss_kib'] / 1024:>8.1f} {sample['fds']:>5} {sample['threads']:>4} "
                  f"{sample['match_rules']:>6} {sample['agent_connections']:>5} {sample['queued_messages']:>6} "
                  f"{sample['sim_rss_kib'] / 1024:>8.1f} {sample['bus_rss_kib'] / 1024:>8.1f} "
                  f"{sample.get('values', 0):>7} {sample.get('sessions', 0):>8} {sample.get('reloads', 0):>7}",
                  flush=True)
    finally:
        stop.set()
        # The clients are daemon threads, some blocked in a read with a long timeout: wait 20 s in all.
        joined_by = time.monotonic() + 20
        for thread in threads:
            thread.join(timeout=max(0, joined_by - time.monotonic()))
        if agent.poll() is None:
            agent.send_signal(signal.SIGTERM)
            try:
                agent.wait(timeout=60)
            except subprocess.TimeoutExpired:
                stacks = os.path.join(work, "agent-stacks.txt")
                if shutil.which("gdb"):
                    with open(stacks, "w") as file:
                        subprocess.run(["gdb", "-p", str(agent.pid), "-batch", "-ex", "thread apply all bt"],
                                       stdout=file, stderr=subprocess.STDOUT, timeout=120)
                agent.kill()
                failures.append(f"bleagent did not stop within 60 s of SIGTERM (its threads' stacks: {stacks})")
        log.close()

    steady = [sample for sample in samples if sample["t"] >= args.warmup_seconds]
    if len(steady) < 6:
        failures.append(f"only {len(steady)} samples after the warm-up: run longer")
    else:
        third = len(steady) // 3
        early, late = steady[:third], steady[-third:]
        allowances = [
            ("rss_kib", lambda base: base * 0.10 + 8192, "RSS (KiB)"),
            ("fds", lambda base: 4, "open file descriptors"),
            ("threads", lambda base: 2, "threads"),
            ("match_rules", lambda base: 0, "D-Bus match rules of the agent"),
            ("agent_connections", lambda base: 0, "the agent's bus connections"),
        ]
        print(f"\nsoak: medians after {args.warmup_seconds:g} s of warm-up, first third vs last third "
              f"({third} samples each)")
        for key, allowance, label in allowances:
            before, after = median(early, key), median(late, key)
            limit = before + allowance(before)
            verdict = "ok" if after <= limit else "GREW"
            print(f"  {label:<34} {before:>10g} -> {after:>10g}  (limit {limit:g}) {verdict}")
            if after > limit:
                failures.append(f"{label} grew from {before:g} to {after:g} (limit {limit:g})")
        # A reload closes the role's bus connection and opens another: for a moment there are none, or
        # two while the old one's close outlasts the role's stop deadline. A leak shows in the medians;
        # the moments are counted here.
        for key in BUS_KEYS:
            usual = median(steady, key)
            off = [sample["t"] for sample in steady if sample[key] != usual]
            print(f"  {key.replace('_', ' ')}: {usual:g} in {len(steady) - len(off)} of {len(steady)} samples; "
                  f"otherwise at {off} s (peak {max(s[key] for s in steady)})")
        flowing = late[-1].get("values", 0) - late[0].get("values", 0)
        print(f"  values delivered during the last third: {flowing}")
        if flowing <= 0:
            failures.append("the notifications stopped reaching the steady client")
        peak = max(sample["rss_kib"] for sample in steady) / 1024
        print(f"  peak RSS after warm-up {peak:.1f} MiB; the simulator's dbus-daemon: "
              f"{median(early, 'bus_rss_kib') / 1024:.1f} -> {median(late, 'bus_rss_kib') / 1024:.1f} MiB")
    totals = counters.snapshot()
    print("soak: counts: " + ", ".join(f"{key} {value}" for key, value in sorted(totals.items())))
    for attribute in ["last_steady_error", "last_refusal", "last_failed_call", "last_connection_error", "last_reload_error"]:
        if hasattr(counters, attribute):
            print(f"soak: {attribute.replace('_', ' ')}: {getattr(counters, attribute)}")
    if totals.get("values", 0) == 0:
        failures.append("no value event reached the steady client")
    if totals.get("reloads", 0) == 0:
        failures.append("no reload completed")
    if totals.get("sessions", 0) < args.clients:
        failures.append(f"only {totals.get('sessions', 0)} client sessions completed")
    if args.csv and samples:
        keys = sorted({key for sample in samples for key in sample})
        with open(args.csv, "w") as file:
            file.write(",".join(keys) + "\n")
            for sample in samples:
                file.write(",".join(str(sample.get(key, "")) for key in keys) + "\n")
    if failures:
        print("soak: FAILED: " + "; ".join(failures) + f" (agent log: {log_path})", file=sys.stderr)
        return 1
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    print("soak: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
