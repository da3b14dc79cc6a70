import BLETesting
import Glibc
import IO
import JSON
import Testing

/// Debian's mosquitto and its clients, as the fleet tests run them.
enum MosquittoTools {
    static let broker = "/usr/sbin/mosquitto"
    static let subscribe = "/usr/bin/mosquitto_sub"
    static let publish = "/usr/bin/mosquitto_pub"
    static let requestResponse = "/usr/bin/mosquitto_rr"
    static let passwords = "/usr/bin/mosquitto_passwd"
}

/// A real mosquitto broker for one test, in its own directory: a Unix socket
/// listener (and a TCP one on a free loopback port when asked), the caller's
/// extra config lines, persistence in the directory (so a graceful restart
/// keeps persistent sessions and retained messages). Ready once it logged
/// that it runs; its log also goes to `mosquitto.log` there.
final class MosquittoBroker {
    let directory: String
    let extra: String
    /// The TCP listener's port, when there is one.
    private(set) var port: Int?
    private var child: Child?

    var socketPath: String { "\(directory)/mqtt.sock" }
    var url: String { "unix:\(socketPath)" }
    /// The arguments that point a mosquitto client at the Unix socket.
    var clientArguments: [String] { ["--unix", socketPath] }

    /// Starts a broker; `extra` is appended to its config and `tcpListener`
    /// (the settings of a TCP listener) follows a `listener` line; in both,
    /// `$DIR` stands for `directory`, where `prepare` may write files first.
    init(extra: String = "", tcpListener: String? = nil, prepare: (String) async throws -> Void = { _ in }) async throws
    {
        directory = makeTemporaryDirectory()
        self.extra = extra
        try await prepare(directory)
        // A free port is found by binding and releasing it, so another process may take it before mosquitto
        // binds it: a broker that could not bind its port starts again on another.
        for attempt in 1...5 {
            port = tcpListener == nil ? nil : Self.freePort()
            var config = """
                per_listener_settings false
                persistence true
                persistence_location \(directory)/
                autosave_interval 1
                log_dest stderr
                log_dest file \(directory)/mosquitto.log
                log_type all
                listener 0 \(directory)/mqtt.sock

                """
            if geteuid() == 0 { config += "user root\n" }
            if let port, let tcpListener { config += "listener \(port) 127.0.0.1\n\(tcpListener)\n" }
            config += extra.isEmpty ? "allow_anonymous true\n" : extra + "\n"
            config = config.replacing("$DIR", with: directory)
            writeFile("\(directory)/mosquitto.conf", config)
            do {
                try await start()
                return
            } catch let error as ChildError
                where attempt < 5 && port != nil && error.description.contains("Address already in use")
            {
                continue
            }
        }
    }

    deinit {
        // Killed; the shared loop reaps it.
        child?.signal(SIGKILL)
        removeTree(directory)
    }

    private func start() async throws {
        let broker = try await Child(MosquittoTools.broker, ["-c", "\(directory)/mosquitto.conf"])
        guard await broker.waitForStderr(containing: " running") else {
            broker.signal(SIGKILL)
            throw ChildError(description: "mosquitto did not start: \(await broker.finish().stderr)")
        }
        // Its log continues in mosquitto.log; a closed pipe only fails its writes (mosquitto ignores SIGPIPE).
        broker.closeStandardError()
        child = broker
    }

    /// Stops it with `signal` (SIGTERM saves its persistence) and awaits its exit.
    func stop(_ signal: Int32 = SIGTERM) async {
        guard let child else { return }
        child.signal(signal)
        _ = await child.finish()
        self.child = nil
    }

    /// A restart: SIGTERM, then a new broker on the same config, socket and persistence.
    func restart() async throws {
        await stop()
        try await start()
    }

    /// Its log so far.
    var log: String { (try? String(decoding: readFileBytes("\(directory)/mosquitto.log"), as: UTF8.self)) ?? "" }

    /// A port nothing listens on now (bound once and released).
    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                _ = bind(fd, pointer, length)
                return getsockname(fd, pointer, &length)
            }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// A mosquitto_sub on `topics` printing `topic payload` lines (`-v`);
    /// ready once the broker acknowledged the subscriptions.
    func subscriber(_ topics: [String], extra: [String] = []) async throws -> Child {
        let arguments =
            clientArguments + ["-v", "-q", "1", "-d"] + extra + topics.flatMap { ["-t", $0] }
        // Line-buffered, so that its debug line about the SUBACK arrives at once.
        let child = try await Child("/usr/bin/stdbuf", ["-oL", MosquittoTools.subscribe] + arguments)
        #expect(await child.waitForStdout(containing: "received SUBACK"), "mosquitto_sub did not subscribe")
        return child
    }

    /// Publishes one message with mosquitto_pub; its exit status and stderr.
    @discardableResult
    func publish(
        _ topic: String, _ message: String, retain: Bool = false, extra: [String] = []
    ) async throws -> (
        status: Int32, stderr: String
    ) {
        let arguments =
            clientArguments + ["-q", "1", "-t", topic, "-m", message] + (retain ? ["-r"] : []) + extra
        let result = try await Child(MosquittoTools.publish, arguments).finish()
        return (result.status, result.stderr)
    }
}

/// The file's bytes (empty when absent).
func readFileBytes(_ path: String) throws -> [UInt8] {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return [] }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while case let count = read(fd, &chunk, chunk.count), count > 0 { bytes += chunk[..<count] }
    return bytes
}

/// The payload of the first line `topic payload` of `child`'s output whose
/// topic is `topic` and whose payload satisfies `accept`, parsed as JSON;
/// waits for it (lines already seen by an earlier call are not looked at again).
func nextMessage(
    from child: Child, topic: String, where accept: (JSON) -> Bool = { _ in true }
) async -> JSON? {
    let line = await child.waitForStdoutLine { line in
        guard line.hasPrefix(topic + " ") else { return false }
        guard let json = try? JSON(parsing: Array(line.utf8.dropFirst(topic.utf8.count + 1))) else { return false }
        return accept(json)
    }
    return line.flatMap { try? JSON(parsing: Array($0.utf8.dropFirst(topic.utf8.count + 1))) }
}

/// The payloads of the first messages on each of `topics`, in whatever order they come.
func messages(from child: Child, topics: Set<String>) async -> [String: JSON] {
    var found: [String: JSON] = [:]
    while found.count < topics.count {
        guard
            let line = await child.waitForStdoutLine(where: { line in
                topics.contains { line.hasPrefix($0 + " ") && found[$0] == nil }
            })
        else { break }
        let topic = String(line.prefix { $0 != " " })
        found[topic] = try? JSON(parsing: Array(line.utf8.dropFirst(topic.utf8.count + 1)))
    }
    return found
}

/// A fleet section for an agent on `broker`.
func fleetSection(broker: MosquittoBroker, node: String, extra: String = "") -> String {
    """
    "fleet": { "broker": "\(broker.url)", "node": "\(node)", "statusSeconds": 60\(extra.isEmpty ? "" : ", " + extra) }
    """
}

/// An agent config: the Diagnostics plugin in both roles (no BLE needed),
/// backend sim, with `fleet` (a `"fleet": {...}` member, or "" for none) added.
func diagnosticsConfig(role: String = "central", fleet: String, heartbeatSeconds: Int = 0) -> String {
    """
    {
      "version": 1,
      "role": "\(role)",
      "backend": "sim",
      "control": { "socket": "run/control.sock" },
      "restore": { "stateDirectory": "state" },
      "pluginDirectory": "\(buildDirectory)",
      "sim": { "scenario": "\(repositoryRoot)/sim/scenarios/default.json" },
      "roles": {
        "central": { "plugin": "Diagnostics", "config": { "heartbeatSeconds": \(heartbeatSeconds) } },
        "peripheral": { "plugin": "Diagnostics", "config": { "heartbeatSeconds": \(heartbeatSeconds) } }
      }\(fleet.isEmpty ? "" : ",\n  " + fleet)
    }
    """
}

/// Waits (on the agent's answers, with the usual deadline) until `fleet.status` satisfies `condition`;
/// the last status seen.
@discardableResult
func waitForFleetStatus(
    socket: [String], _ what: String, until condition: (JSON) -> Bool
) async throws -> JSON {
    let deadline = ContinuousClock.now + testDeadline * 3
    var last: JSON = .null
    while ContinuousClock.now < deadline {
        let result = try await blectl(socket + ["--json", "call", "fleet.status"])
        if result.status == 0, let status = try? JSON(parsing: result.stdout) {
            last = status
            if condition(status) { return status }
        }
        // Between two answers from the agent: the condition is about the broker's side too.
        try await Task.sleep(for: .milliseconds(50))
    }
    Issue.record("fleet.status never showed \(what); last: \(last.serialized())")
    return last
}

/// Stops each child (mosquitto clients) with SIGTERM and reaps it.
func terminate(_ children: Child...) async {
    for child in children {
        child.signal(SIGTERM)
        _ = await child.finish()
    }
}

/// Whether `/proc/<pid>/maps` lists a file whose name contains `library`
/// (read on the blocking pool).
func maps(_ pid: pid_t, library: String) async -> Bool {
    await BlockingPool.shared.run { readText("/proc/\(pid)/maps").contains(library) }
}
