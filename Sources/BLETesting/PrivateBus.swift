import DBus
import Glibc
import IO
import Testing

/// A private `dbus-daemon` for one test: a session-type bus listening in a fresh temporary directory, with the
/// `org.freedesktop.DBus.Debug.Stats` interface reachable. The daemon prints its address once it listens; `start()`
/// awaits that line (an event, not a delay) and `stop()` kills the daemon (the shared loop reaps it), as does
/// dropping the bus.
public final class PrivateBus: Sendable {
    /// The bus's address (`unix:path=...`), for `DBUS_SYSTEM_BUS_ADDRESS` or ``connect()``.
    public let address: String
    /// A fresh directory of this bus's own (its socket is in it), removed by ``stop()``.
    public let directory: String
    private let daemon: ChildProcess

    private init(address: String, directory: String, daemon: ChildProcess) {
        self.address = address
        self.directory = directory
        self.daemon = daemon
    }

    /// Something a test needed could not be set up (a daemon or blesim did not start).
    public enum Failure: Error { case setup(String) }

    deinit { stop() }

    /// Starts a bus; `policy` is appended to the default policy (later rules win), for tests of
    /// a bus that refuses something, such as `<deny send_destination="org.bluez"/>`.
    public static func start(policy: String = "") async throws -> PrivateBus {
        brokenPipesIgnored
        var template = Array("/tmp/bleagent-dbus-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Failure.setup("mkdtemp failed: \(errno)") }
        let directory = String(cString: made)
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:dir=\(directory)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
                \(policy)
              </policy>
            </busconfig>
            """
        let configPath = directory + "/bus.conf"
        let file = try FileDescriptor.open(configPath, .writeOnly, options: [.create, .truncate])
        defer { file.close() }
        try file.writeAll(Array(config.utf8))
        let daemon = try await ChildProcess.spawn(
            "dbus-daemon", ["--config-file=\(configPath)", "--nofork", "--print-address=1"],
            standardOutput: .collect(limit: 4096), standardError: .null, deathSignal: SIGTERM)
        let output = try #require(daemon.standardOutput)
        guard await output.wait(timeout: testDeadline, until: { $0.contains(UInt8(ascii: "\n")) }) else {
            daemon.signal(SIGKILL)
            throw Failure.setup("dbus-daemon printed no address")
        }
        let line = output.text.prefix { $0 != "\n" }
        return PrivateBus(address: String(line), directory: directory, daemon: daemon)
    }

    /// Kills the daemon (every client sees its connection drop; the shared loop reaps it) and removes the
    /// directory.
    public func stop() {
        daemon.signal(SIGKILL)
        removeTree(directory)
    }

    /// A new connection to the bus.
    public func connect() async throws -> DBusConnection {
        try await DBusConnection.connect(address: address)
    }

    /// Runs `body` with a fresh bus, always stopping it afterwards.
    public static func with<T>(
        policy: String = "", _ body: (PrivateBus) async throws -> T
    ) async throws -> T {
        let bus = try await PrivateBus.start(policy: policy)
        defer { bus.stop() }
        return try await body(bus)
    }

    /// `GetConnectionStats(name)["MatchRules"]` from the daemon's Stats interface: the match rules the bus holds
    /// for that connection.
    public func matchRuleCount(of name: String, using connection: DBusConnection) async throws -> UInt32 {
        let reply = try await connection.call(
            destination: "org.freedesktop.DBus", path: try ObjectPath("/org/freedesktop/DBus"),
            interface: "org.freedesktop.DBus.Debug.Stats", member: "GetConnectionStats", arguments: [.string(name)])
        let stats = try reply.decode([String: DBusValue].self)
        return try stats["MatchRules"]?.decode(UInt32.self) ?? 0
    }
}

/// Runs a command line (standard output and error together) and returns its output and exit status (used to
/// check our objects with the reference tools `busctl` and `dbus-send`); the exit is awaited on the shared loop.
public func tool(_ arguments: [String]) async throws -> (output: String, status: Int32) {
    let process = try await TestProcess(arguments[0], Array(arguments.dropFirst()))
    let result = await process.finish()
    return (result.output + result.errors, result.status)
}
