#!/usr/bin/env python3
"""A fleet on one broker, measured (docs/fleet.md, "Scale").

Starts one private dbus-daemon and one blesim (Tests/BlectlTests/Fixtures/payment-lane.json),
one mosquitto on a Unix socket (or uses --broker-url), N bleagent central lanes on that blesim
(each its own node id, PaymentTerminalScanner scanning, the fleet section on), a consumer
(mosquitto_sub on bleagent/#) and an RPC load: each lane gets --rpc-rate agent.status requests a
second over MQTT. Over --seconds it measures messages through the broker, the agents' CPU and RSS,
the latency from an agent's event (its "at") to the consumer, the RPC round trip, and then the time
for a config pushed to every node's config/set to be applied everywhere. Prints a table; exits 1 if
a lane never came online or a push was not applied everywhere.

Run it through scripts/fleet-scale.sh, which sets the machine up and builds first.
"""
import argparse
import faulthandler
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLK_TCK = os.sysconf("SC_CLK_TCK")


def progress(text):
    print(f"fleet-scale: {text}", file=sys.stderr, flush=True)


def percentile(values, fraction):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def wait_for_line(process, text, deadline):
    """Reads process's stdout (line by line) until a line contains text."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        line = process.stdout.readline()
        if not line:
            return False
        if text in line:
            return True
    return False


def open_text(path):
    try:
        with open(path) as file:
            return file.read()
    except OSError:
        return ""


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Consumer:
    """mosquitto_sub on bleagent/# writing '%U topic payload' lines to a file."""

    def __init__(self, client_args, path):
        self.path = path
        self.file = open(path, "w")
        self.process = subprocess.Popen(
            ["mosquitto_sub", *client_args, "-q", "1", "-t", "bleagent/#", "-F", "%U %t %p"],
            stdout=self.file, stderr=subprocess.DEVNULL)

    def lines(self):
        with open(self.path) as source:
            for line in source:
                parts = line.rstrip("\n").split(" ", 2)
                if len(parts) == 3:
                    yield float(parts[0]), parts[1], parts[2]

    def stop(self):
        self.process.terminate()
        self.process.wait()
        self.file.close()


def lane_config(directory, index, args, bus_socket, build, rssi_threshold):
    node = f"lane-{index:03d}"
    fleet = {
        "broker": args.broker_url, "node": node, "statusSeconds": 5,
        "events": {"discoverySeconds": 2}, "rpcAllow": ["agent.status"],
    }
    return node, {
        "version": 1, "role": "central", "backend": "bluez",
        "control": {"socket": f"{directory}/control.sock"},
        "restore": {"stateDirectory": f"{directory}/state"},
        "pluginDirectory": build,
        "roles": {"central": {"plugin": "PaymentTerminalScanner",
                              "config": {"rssiThreshold": rssi_threshold, "settle": 0}}},
        "fleet": fleet,
    }


def main():
    if os.environ.get("FLEET_SCALE_TRACE"):
        faulthandler.dump_traceback_later(int(os.environ["FLEET_SCALE_TRACE"]), exit=True)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--seconds", type=int, default=30, help="the measurement window")
    parser.add_argument("--rpc-rate", type=float, default=1.0, help="agent.status requests per lane per second")
    parser.add_argument("--build", default=os.path.join(ROOT, ".build", "debug"))
    parser.add_argument("--broker-url", default=None,
                        help="use this broker (mqtt://host:port) instead of starting mosquitto, e.g. a cluster node")
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="bleagent-fleet-scale-")
    children = []
    lanes = []

    def spawn(command, **kwargs):
        process = subprocess.Popen(command, **kwargs)
        children.append(process)
        return process

    try:
        bus_address = f"unix:path={work}/bus"
        daemon = spawn(["dbus-daemon", "--session", "--nofork", "--print-address=1", f"--address={bus_address}"],
                       stdout=subprocess.PIPE, text=True)
        if not wait_for_line(daemon, "unix:path=", 20):
            sys.exit("dbus-daemon did not start")
        scenario = os.path.join(ROOT, "Tests/BlectlTests/Fixtures/payment-lane.json")
        blesim = spawn([os.path.join(args.build, "blesim"), "--address", bus_address, "--scenario", scenario],
                       stdout=subprocess.PIPE, stderr=open(f"{work}/blesim.log", "w"), text=True)
        if not wait_for_line(blesim, "blesim: ready", 30):
            sys.exit("blesim did not start")

        if args.broker_url is None:
            socket_path = f"{work}/mqtt.sock"
            with open(f"{work}/mosquitto.conf", "w") as conf:
                conf.write(f"listener 0 {socket_path}\nallow_anonymous true\nmax_queued_messages 100000\n"
                           f"log_dest file {work}/mosquitto.log\n"
                           + ("user root\n" if os.geteuid() == 0 else ""))
            broker = spawn(["mosquitto", "-c", f"{work}/mosquitto.conf"])
            end = time.monotonic() + 20
            while time.monotonic() < end and " running" not in open_text(f"{work}/mosquitto.log"):
                time.sleep(0.05)
            args.broker_url = f"unix:{socket_path}"
            broker_pid = broker.pid
            client_args = ["--unix", socket_path]
        else:
            broker_pid = None
            host_port = args.broker_url.split("://", 1)[1]
            host, _, port = host_port.rpartition(":")
            client_args = ["-h", host or host_port, "-p", port or "1883"]

        progress(f"broker {args.broker_url}; starting {args.agents} lanes")
        consumer = Consumer(client_args, f"{work}/consumer.log")
        time.sleep(0.5)  # the consumer's subscription; the window starts only once every lane is online

        environment = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=bus_address)
        started = time.monotonic()
        for index in range(args.agents):
            directory = f"{work}/lane-{index:03d}"
            os.makedirs(directory)
            node, config = lane_config(directory, index, args, bus_address, args.build, -10)
            with open(f"{directory}/roles.json", "w") as file:
                json.dump(config, file)
            process = spawn([os.path.join(args.build, "bleagent"), "--config", f"{directory}/roles.json"],
                            env=environment, stderr=open(f"{directory}/agent.log", "w"))
            lanes.append((node, directory, process, config))

        online = set()
        deadline = time.monotonic() + 120
        while len(online) < args.agents and time.monotonic() < deadline:
            for _, topic, payload in consumer.lines():
                if topic.endswith("/status") and '"state":"online"' in payload:
                    online.add(topic.split("/")[1])
            time.sleep(0.2)
        startup = time.monotonic() - started
        if len(online) < args.agents:
            sys.exit(f"only {len(online)} of {args.agents} lanes came online")

        progress(f"all online after {startup:.1f} s; measuring for {args.seconds} s")
        # The window: RPC load from one mosquitto_pub per lane (-l: one request per line), and the natural traffic.
        publishers = [spawn(["mosquitto_pub", *client_args, "-t", f"bleagent/{node}/rpc", "-l", "-q", "0"],
                            stdin=subprocess.PIPE, text=True) for node, *_ in lanes]
        before_cpu = {node: cpu_seconds(process.pid) for node, _, process, _ in lanes}
        broker_before = cpu_seconds(broker_pid) if broker_pid else None
        window_start = time.time()
        sent = 0
        next_tick = time.monotonic()
        while time.time() < window_start + args.seconds:
            for (node, *_), publisher in zip(lanes, publishers):
                request = {"jsonrpc": "2.0", "id": f"{time.time_ns()}", "method": "agent.status",
                           "replyTo": f"bleagent/{node}/rpc/reply/bench"}
                publisher.stdin.write(json.dumps(request) + "\n")
                publisher.stdin.flush()
                sent += 1
            next_tick += 1.0 / args.rpc_rate
            time.sleep(max(0.0, next_tick - time.monotonic()))
        window_end = time.time()
        after_cpu = {node: cpu_seconds(process.pid) for node, _, process, _ in lanes}
        broker_after = cpu_seconds(broker_pid) if broker_pid else None
        rss = [rss_kib(process.pid) for _, _, process, _ in lanes]
        for publisher in publishers:
            publisher.stdin.close()
        time.sleep(2)  # the last replies

        progress("pushing a config to every node")
        # The fleet-wide push: every node's config with another rssiThreshold, retained on its config/set.
        pushes = []
        for node, directory, process, config in lanes:
            pushed = dict(config)
            pushed["roles"] = {"central": {"plugin": "PaymentTerminalScanner",
                                           "config": {"rssiThreshold": -11, "settle": 0}}}
            pushes.append((node, json.dumps(pushed)))
        push_start = time.time()
        # One mosquitto_pub per node, all at once, as operators' tools do. A connect that the
        # broker's listen queue refuses (EAGAIN on a busy Unix socket) is tried again: a
        # limit of this script's clients, not of the agents; the retries are printed.
        waiting, retries = pushes, 0
        for attempt in range(5):
            publishers = [(node, text, subprocess.Popen(
                ["mosquitto_pub", *client_args, "-q", "1", "-r", "-t", f"bleagent/{node}/config/set", "-m", text],
                stderr=subprocess.DEVNULL)) for node, text in waiting]
            waiting = [(node, text) for node, text, publisher in publishers if publisher.wait() != 0]
            if not waiting:
                break
            retries += len(waiting)
            time.sleep(0.5 * (attempt + 1))
        if retries:
            progress(f"config push: {retries} publishes tried again (connect refused by the broker's queue)")
        for node, _ in waiting:
            progress(f"{node}: the config could not be published")
        applied = {}
        deadline = time.monotonic() + 120
        while len(applied) < args.agents and time.monotonic() < deadline:
            for received, topic, payload in consumer.lines():
                if topic.endswith("/config/result") and received >= push_start and '"status":"applied"' in payload:
                    applied.setdefault(topic.split("/")[1], received)
            time.sleep(0.2)
        consumer.stop()
        outcomes = {}
        for received, topic, payload in consumer.lines():
            if topic.endswith("/config/result") and received >= push_start:
                outcomes[topic.split("/")[1]] = payload
        for node, payload in sorted(outcomes.items()):
            if '"status":"applied"' not in payload:
                progress(f"{node}: {payload}")
        for node, *_ in lanes:
            if node not in outcomes:
                progress(f"{node}: no config/result after the push")

        # Figures from the consumer's log.
        in_window = [(received, topic, payload) for received, topic, payload in consumer.lines()
                     if window_start <= received <= window_end]
        latencies, round_trips = [], []
        for received, topic, payload in in_window:
            try:
                message = json.loads(payload)
            except ValueError:
                continue
            if "/events/" in topic or topic.endswith("/status"):
                if isinstance(message, dict) and isinstance(message.get("at"), int):
                    latencies.append(received * 1000 - message["at"])
            elif "/rpc/reply/" in topic and isinstance(message, dict):
                round_trips.append(received * 1000 - int(message.get("id", "0")) / 1e6)
        window = window_end - window_start
        cpu = [100 * (after_cpu[node] - before_cpu[node]) / window for node, *_ in lanes]
        rows = [
            ("agents", f"{args.agents} central lanes (PaymentTerminalScanner on one blesim), broker {args.broker_url}"),
            ("start-up", f"all {args.agents} online in {startup:.1f} s"),
            ("window", f"{window:.1f} s, {sent} RPC requests sent ({args.rpc_rate:g}/s per lane)"),
            ("messages via broker", f"{len(in_window) / window:.0f}/s to the consumer "
                                    f"({len(round_trips)} RPC replies, {len(latencies)} events and statuses)"),
            ("agent CPU", f"mean {statistics.mean(cpu):.1f} %, max {max(cpu):.1f} % of one core"),
            ("agent RSS", f"mean {statistics.mean(rss) / 1024:.1f} MiB, max {max(rss) / 1024:.1f} MiB"),
            ("event -> consumer", f"p50 {percentile(latencies, 0.5):.1f} ms, p99 {percentile(latencies, 0.99):.1f} ms"),
            ("RPC round trip", f"p50 {percentile(round_trips, 0.5):.1f} ms, p99 {percentile(round_trips, 0.99):.1f} ms"),
            ("config push", f"applied on {len(applied)}/{args.agents} nodes; all within "
                            f"{(max(applied.values()) - push_start) if applied else float('nan'):.2f} s, "
                            f"p50 {percentile([t - push_start for t in applied.values()], 0.5):.2f} s"),
        ]
        if broker_before is not None:
            rows.insert(6, ("broker CPU", f"{100 * (broker_after - broker_before) / window:.1f} % of one core"))
        width = max(len(name) for name, _ in rows)
        for name, value in rows:
            print(f"{name.ljust(width)}  {value}")
        return 0 if len(applied) == args.agents else 1
    finally:
        for _, _, process, _ in lanes:
            process.send_signal(signal.SIGTERM)
        for process in reversed(children):
            if process.poll() is None:
                process.terminate()
        for process in children:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        if os.environ.get("KEEP") is None:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
