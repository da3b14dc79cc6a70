import Glibc
import JSON
import Testing

/// Whether `pid` names a live process (not a zombie awaiting its parent).
func processAlive(_ pid: Int32) -> Bool {
    guard kill(pid, 0) == 0 else { return false }
    let fd = open("/proc/\(pid)/stat", O_RDONLY)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 512)
    let count = read(fd, &buffer, buffer.count)
    let text = String(decoding: buffer[..<max(0, count)], as: UTF8.self)
    return !text.contains(") Z ")
}

@Suite("bleagent on the embedded simulator", .serialized)
struct SimBackendProcessTests {
    @Test(
        "backend sim: the agent starts its own bus and blesim; blectl scan/devices list the scenario's devices; status shows the bus; a reload to peripheral keeps the sim; SIGTERM leaves no child behind"
    )
    func embeddedSimulator() throws {
        let agent = try RunningAgent(
            config: RunningAgent.config(role: "central", plugins: ("Diagnostics", "Diagnostics")))
        let socket = ["--socket", agent.socketPath]
        let status = try JSON(parsing: try blectl(socket + ["--json", "status"]).stdout)
        #expect(status["backend"] == "sim")
        #expect(status["roleState"] == ["state": "running", "role": "central", "plugin": "Diagnostics"])
        let address = status["sim"]?["busAddress"]?.stringValue ?? ""
        #expect(address.hasPrefix("unix:path=\(agent.directory)/run/sim/sim-bus.sock"), "\(status)")

        // Children: the private bus and blesim, named in the agent's log.
        #expect(agent.child.waitForStderr(containing: "blesim pid"))
        let log = agent.child.stderrText
        let pids = Self.childPIDs(in: log)
        #expect(pids.count == 2, "\(log)")
        #expect(pids.allSatisfy(processAlive))

        // Scan, then wait for the discovered events of the four named devices of default.json.
        let events = try Child("\(buildDirectory)/blectl", socket + ["--json", "events", "--kind", "discovered"])
        #expect(events.waitForStderr(containing: "streaming events"))
        #expect(try blectl(socket + ["scan", "start"]).stdout == "scanning\n")
        for name in ["PayTerm-01", "PayTerm-02", "PayTerm-03", "HRM-Pro 4410"] {
            #expect(events.waitForStdout(containing: name), "\(name) discovered")
        }
        kill(events.pid, SIGKILL)
        _ = events.finish()
        let devices = try blectl(socket + ["devices"])
        #expect(devices.status == 0)
        let lines = devices.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("ID") == true && lines.first?.contains("NAME") == true, "\(devices.stdout)")
        for name in ["PayTerm-01", "PayTerm-02", "PayTerm-03", "HRM-Pro 4410"] {
            let row = lines.first { $0.contains(" \(name) ") }
            #expect(row != nil, "\(name) in \(devices.stdout)")
            // An RSSI in dBm follows the name.
            let rssi = row.flatMap { $0.split(separator: " ").first { $0.hasPrefix("-") && Int($0) != nil } }
            #expect(rssi != nil, "RSSI for \(name)")
        }
        #expect(try blectl(socket + ["scan", "stop"]).stdout == "scan stopped\n")

        // Reload to the peripheral role: same sim (same pids), central methods now refused.
        writeFile(agent.configPath, RunningAgent.config(role: "peripheral", plugins: ("Diagnostics", "Diagnostics")))
        agent.signal(SIGHUP)
        #expect(agent.notify.next()?.hasPrefix("RELOADING=1\n") == true)
        #expect(agent.notify.next() == "READY=1\nSTATUS=peripheral role running (config \(agent.configPath))")
        #expect(pids.allSatisfy(processAlive), "the sim kept running across the role switch")
        let again = try JSON(parsing: try blectl(socket + ["--json", "status"]).stdout)
        #expect(again["sim"]?["busAddress"]?.stringValue == address, "\(again)")
        #expect(
            try blectl(socket + ["devices"]).stderr == "blectl: agent error: the central role is not running (-32011)\n"
        )
        let services = try blectl(socket + ["--json", "call", "peripheral.services"])
        #expect(services.stdout == #"{"services":[]}"# + "\n")

        let stopped = agent.stop()
        #expect(stopped.status == 0)
        #expect(stopped.stderr.contains("sim: stopping blesim"))
        for pid in pids { #expect(!processAlive(pid), "child \(pid) gone after SIGTERM") }
    }

    /// The bus and blesim pids from the agent's `sim: private bus ... (pid N), blesim pid M` line.
    static func childPIDs(in log: String) -> [Int32] {
        guard let found = log.split(separator: "\n").first(where: { $0.contains("sim: private bus") }) else {
            return []
        }
        let line = String(found)
        var pids: [Int32] = []
        for marker in ["(pid ", "blesim pid "] {
            let pieces = line.split(separator: marker, maxSplits: 1, omittingEmptySubsequences: false)
            guard pieces.count == 2 else { continue }
            let digits = pieces[1].prefix { $0.isNumber }
            if let pid = Int32(digits) { pids.append(pid) }
        }
        return pids
    }
}
