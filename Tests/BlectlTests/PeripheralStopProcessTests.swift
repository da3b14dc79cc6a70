import BLETesting
import Glibc
import JSON
import Testing

/// One message as dbus-monitor prints it: the header line and its argument lines.
struct MonitoredMessage: Equatable {
    /// `method call`, `method return`, `error` or `signal`.
    let kind: String
    /// `sender=`, `destination=`, `serial=`, `reply_serial=`, `member=`, `interface=`, `path=` values.
    let fields: [String: String]
    /// The argument lines, trimmed.
    let arguments: [String]

    subscript(_ field: String) -> String? { fields[field] }

    /// Splits dbus-monitor's text into messages (a header line starts at column 0).
    static func parse(_ text: String) -> [MonitoredMessage] {
        var messages: [MonitoredMessage] = []
        var header: String?
        var arguments: [String] = []
        func flush() {
            guard let header else { return }
            let kinds = ["method call", "method return", "error", "signal"]
            guard let kind = kinds.first(where: { header.hasPrefix($0 + " ") }) else { return }
            var fields: [String: String] = [:]
            for token in header.split(whereSeparator: { $0 == " " || $0 == ";" }) {
                let parts = token.split(separator: "=", maxSplits: 1)
                if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
            }
            messages.append(MonitoredMessage(kind: kind, fields: fields, arguments: arguments))
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(" ") {
                arguments.append(line.trimmingCharacters(in: " "))
            } else {
                flush()
                header = line.isEmpty ? nil : String(line)
                arguments = []
            }
        }
        flush()
        return messages
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in character: Character) -> String {
        String(drop { $0 == character }.reversed().drop { $0 == character }.reversed())
    }
}

/// The peripheral role's clean stop, seen on the embedded simulator's private
/// bus by dbus-monitor: before the agent's bus connection goes away (its
/// unique name's NameOwnerChanged), it called UnregisterAdvertisement and
/// UnregisterApplication itself and blesim answered both; blesim never had
/// to call the advertisement's Release. Cleaning up only because the
/// connection closed (blesim drops a leaving owner's registrations) would
/// show neither call and fail.
@Suite("bleagent's peripheral role stops cleanly", .serialized, .timeLimit(.minutes(3)))
struct PeripheralStopProcessTests {
    enum StopPath: String, CaseIterable, CustomTestStringConvertible {
        case sigterm = "SIGTERM"
        case shutdown = "agent.shutdown"
        case reloadToCentral = "a reload that switches to central"
        var testDescription: String { rawValue }
    }

    /// SensorAggregator (publishes its GATT service and advertises) with simulated sensors only.
    func config(in directory: String) -> String {
        """
        {
          "version": 1, "role": "peripheral", "backend": "sim",
          "control": { "socket": "run/control.sock" }, "restore": { "stateDirectory": "state" },
          "pluginDirectory": "\(buildDirectory)", "sim": { "scenario": "\(repositoryRoot)/sim/scenarios/default.json" },
          "roles": {
            "central": { "plugin": "Diagnostics", "config": { "heartbeatSeconds": 0 } },
            "peripheral": { "plugin": "SensorAggregator", "config": {
              "sensors": [
                { "id": "hum", "kind": "humidity", "source": { "type": "simulated", "waveform": "constant", "base": 46.65 } }
              ],
              "ingest": { "socketPath": "\(directory)/ingest.sock" },
              "notification": { "intervalSeconds": 1 }, "advertising": { "localName": "gw-1" }
            } }
          }
        }
        """
    }

    @Test(
        "the GATT application and the advertisement are unregistered explicitly while the agent is on the bus",
        arguments: StopPath.allCases)
    func unregistersBeforeLeaving(_ path: StopPath) async throws {
        let data = makeTemporaryDirectory()
        defer { removeTree(data) }
        let agent = try await RunningAgent(config: config(in: data))
        try #require(agent.readyMessage?.hasPrefix("READY=1") == true, "\(agent.readyMessage ?? "no READY")")
        let socket = ["--socket", agent.socketPath]
        let status = try JSON(parsing: try await blectl(socket + ["--json", "status"]).stdout)
        try #require(status["roleState"]?["state"] == "running", "\(status)")
        let address = try #require(status["sim"]?["busAddress"]?.stringValue)
        // The plugin publishes once the manager is poweredOn: registered once it says so.
        #expect(await agent.child.waitForStderr(containing: "; advertising "))
        let published = try await blectl(socket + ["published"]).stdout
        #expect(published.contains("service "), "\(published)")

        let monitor = try await Child("/usr/bin/dbus-monitor", ["--address", address, "--monitor"])
        defer {
            monitor.signal(SIGKILL)
        }
        // dbus-monitor has become a monitor once the bus took its name back.
        #expect(await monitor.waitForStdout(containing: "member=NameLost"))

        switch path {
        case .sigterm:
            agent.signal(SIGTERM)
        case .shutdown:
            #expect(try await blectl(socket + ["shutdown"]).status == 0)
        case .reloadToCentral:
            writeFile(
                agent.configPath, config(in: data).replacing(#""role": "peripheral""#, with: #""role": "central""#))
            agent.signal(SIGHUP)
            #expect(await agent.notify.next()?.hasPrefix("RELOADING=1") == true)
            #expect(await agent.notify.next()?.hasPrefix("READY=1") == true)
        }
        #expect(await monitor.waitForStdout(containing: "member=UnregisterApplication"))
        let calls = MonitoredMessage.parse(monitor.stdoutText)
        let unregisterApplication = try #require(calls.first { $0["member"] == "UnregisterApplication" })
        let agentName = try #require(unregisterApplication["sender"])
        // Wait for the agent's connection to leave the bus (or the bus to end with the agent).
        let left = "string \"\(agentName)\"\n   string \"\"\n"
        if path == .reloadToCentral {
            #expect(await monitor.waitForStdout(containing: left))
        } else {
            _ = await monitor.waitForStdout(containing: left)
        }
        let messages = MonitoredMessage.parse(monitor.stdoutText)
        let leftAt = messages.firstIndex {
            $0["member"] == "NameOwnerChanged"
                && $0.arguments == ["string \"\(agentName)\"", "string \"\(agentName)\"", "string \"\""]
        }
        if path == .reloadToCentral { #expect(leftAt != nil, "the peripheral's connection closed after the switch") }
        let end = leftAt ?? messages.endIndex
        for member in ["UnregisterAdvertisement", "UnregisterApplication"] {
            let call = messages[..<end].firstIndex {
                $0.kind == "method call" && $0["member"] == member && $0["sender"] == agentName
                    && $0["destination"] == "org.bluez"
            }
            guard let call else {
                Issue.record("no \(member) from \(agentName) before it left the bus:\n\(monitor.stdoutText)")
                continue
            }
            let serial = messages[call]["serial"]
            let reply = messages[call..<end].first {
                $0["reply_serial"] == serial && $0["destination"] == agentName
            }
            #expect(
                reply?.kind == "method return",
                "\(member) answered (not an error) before the agent left: \(String(describing: reply))")
        }
        #expect(
            !messages.contains { $0.kind == "method call" && $0["member"] == "Release" },
            "blesim never had to Release the advertisement")
        if path != .reloadToCentral { #expect(await agent.child.finish().status == 0) }
    }
}
