import BLETesting
import Glibc
import JSON
import Testing

/// What the SensorAggregator process tests share: bleagent in the peripheral
/// role with the plugin on its embedded blesim, its ingest socket and its
/// plugin events.
enum SensorAgent {
    /// The default scenario with a second adapter (hci1) for a test's central.
    static func twoAdapterScenario(in directory: String) -> String { scenario(adapters: 2, in: directory) }

    /// The default scenario with `adapters` adapters: hci0 for the agent, the others for a test's centrals.
    /// The default scenario with `adapters` adapters; `advertiseWhileConnected` models a controller that
    /// keeps advertising with a central connected (needed for a second central to find the node).
    static func scenario(adapters: Int, in directory: String, advertiseWhileConnected: Bool = false) -> String {
        let text = readText("\(repositoryRoot)/sim/scenarios/default.json")
        #expect(text.contains("\"adapters\": 1"))
        let path = "\(directory)/adapters-\(adapters).json"
        let top = "\"adapters\": \(adapters)" + (advertiseWhileConnected ? ", \"advertiseWhileConnected\": true" : "")
        writeFile(path, text.replacing("\"adapters\": 1", with: top))
        return path
    }

    /// A peripheral-role config running SensorAggregator with `sensors` (a
    /// JSON array's members) and an ingest socket at `ingest`; `extra` is
    /// added to the plugin's config (`"flushSeconds": 1, `...).
    static func config(scenario: String, ingest: String, sensors: String, extra: String = "") -> String {
        """
        {
          "version": 1, "role": "peripheral", "backend": "sim",
          "control": { "socket": "run/control.sock" }, "restore": { "stateDirectory": "state" },
          "pluginDirectory": "\(buildDirectory)", "sim": { "scenario": "\(scenario)" },
          "roles": { "peripheral": { "plugin": "SensorAggregator", "config": {
            "sensors": [ \(sensors) ], \(extra)
            "ingest": { "socketPath": "\(ingest)" },
            "notification": { "intervalSeconds": 1 }, "advertising": { "localName": "gw-1" }
          } } }
        }
        """
    }

    /// Sends one datagram to the ingest socket at `path`; sendto's result.
    @discardableResult
    static func send(_ path: String, _ bytes: [UInt8]) -> Int {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        return bytes.withUnsafeBytes { buffer in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, buffer.baseAddress, buffer.count, 0, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        }
    }

    /// Sends one ingest line.
    @discardableResult
    static func send(_ path: String, _ line: String) -> Int { send(path, Array(line.utf8)) }

    /// `blectl --json call METHOD` on `agent`, parsed.
    static func call(_ agent: RunningAgent, _ method: String) async throws -> JSON {
        let result = try await blectl(["--socket", agent.socketPath, "--json", "call", method])
        #expect(result.status == 0, "\(method): \(result)")
        return try JSON(parsing: result.stdout)
    }

    /// `blectl --json events --kind plugin` on `agent`, once it streams.
    static func pluginEvents(_ agent: RunningAgent) async throws -> Child {
        let events = try await Child(
            "\(buildDirectory)/blectl", ["--socket", agent.socketPath, "--json", "events", "--kind", "plugin"])
        #expect(await events.waitForStderr(containing: "streaming events"))
        return events
    }

    /// The data of the next plugin event named `name` satisfying `accept`.
    static func next(
        _ name: String, on events: Child, where accept: (JSON) -> Bool = { _ in true }
    ) async -> JSON? {
        let line = await events.waitForStdoutLine { line in
            guard let event = try? JSON(parsing: line), event["data"]?["name"]?.stringValue == name,
                let data = event["data"]?["data"]
            else { return false }
            return accept(data)
        }
        return line.flatMap { try? JSON(parsing: $0) }?["data"]?["data"]
    }

    /// The agent's embedded bus and blesim pids (from its log), which a
    /// SIGKILLed agent leaves behind: the test must end them.
    static func simPIDs(_ agent: RunningAgent) async -> [Int32] {
        #expect(await agent.child.waitForStderr(containing: "blesim pid"))
        return SimBackendProcessTests.childPIDs(in: agent.child.stderrText)
    }

    /// SIGKILLs the agent as a crash would, then ends the bus and blesim it
    /// leaves (they hold its stderr open), and reaps it.
    static func crash(_ agent: RunningAgent, children: [Int32]) async {
        agent.signal(SIGKILL)
        for pid in children { kill(pid, SIGKILL) }
        _ = await agent.child.finish()
    }
}
