import BLETesting
import Glibc
import IO
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
        "backend sim: the agent starts its own bus and blesim; blectl scan/devices list the scenario's devices; connect, services and read the battery level; bluetoothctl sees the same bus; a reload to peripheral keeps the sim; SIGTERM leaves no child behind"
    )
    func embeddedSimulator() async throws {
        let agent = try await RunningAgent(
            config: RunningAgent.config(role: "central", plugins: ("Diagnostics", "Diagnostics")))
        let socket = ["--socket", agent.socketPath]
        let status = try JSON(parsing: try await blectl(socket + ["--json", "status"]).stdout)
        #expect(status["backend"] == "sim")
        #expect(status["roleState"] == ["state": "running", "role": "central", "plugin": "Diagnostics"])
        let address = status["sim"]?["busAddress"]?.stringValue ?? ""
        #expect(address.hasPrefix("unix:path=\(agent.directory)/run/sim/sim-bus.sock"), "\(status)")

        // Children: the private bus and blesim, named in the agent's log.
        #expect(await agent.child.waitForStderr(containing: "blesim pid"))
        let log = agent.child.stderrText
        let pids = Self.childPIDs(in: log)
        #expect(pids.count == 2, "\(log)")
        #expect(pids.allSatisfy(processAlive))

        // Scan, then wait for the discovered events of the four named devices of default.json.
        let events = try await Child("\(buildDirectory)/blectl", socket + ["--json", "events", "--kind", "discovered"])
        #expect(await events.waitForStderr(containing: "streaming events"))
        #expect(try await blectl(socket + ["scan", "start"]).stdout == "scanning\n")
        for name in ["PayTerm-01", "PayTerm-02", "PayTerm-03", "HRM-Pro 4410"] {
            #expect(await events.waitForStdout(containing: name), "\(name) discovered")
        }
        events.signal(SIGKILL)
        _ = await events.finish()
        let devices = try await blectl(socket + ["devices"])
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
        // The heart-rate sensor's GATT database, through the agent, from the embedded blesim.
        let heartRate = "ba94a06f-402a-530d-ac5f-82fe71e3430e"
        #expect(lines.contains { $0.hasPrefix("\(heartRate)  HRM-Pro 4410") }, "a stable id: \(devices.stdout)")
        #expect(try await blectl(socket + ["connect", heartRate]).stdout == "connected to \(heartRate)\n")
        let services = try await blectl(socket + ["services", heartRate])
        #expect(
            services.stdout == """
                KIND              UUID                                  PROPERTIES
                service           0000180d-0000-1000-8000-00805f9b34fb  \("")
                  characteristic  00002a37-0000-1000-8000-00805f9b34fb  notify
                  characteristic  00002a38-0000-1000-8000-00805f9b34fb  read
                service           0000180f-0000-1000-8000-00805f9b34fb  \("")
                  characteristic  00002a19-0000-1000-8000-00805f9b34fb  read,notify

                """, "\(services)")
        let battery = try await blectl(socket + ["read", heartRate, "2a19"])
        #expect(battery.stdout == "5a\n", "battery level 90 %: \(battery)")
        let connected = try await blectl(socket + ["devices"]).stdout.split(separator: "\n")
        #expect(connected.contains { $0.hasPrefix("\(heartRate)  HRM-Pro 4410") && $0.hasSuffix("true") })
        #expect(try await blectl(socket + ["disconnect", heartRate]).stdout == "disconnected from \(heartRate)\n")
        #expect(try await blectl(socket + ["scan", "stop"]).stdout == "scan stopped\n")
        // The plugin got the central manager (and only it) through its context.
        let ble = try await blectl(socket + ["--json", "call", "diag.ble"])
        #expect(ble.stdout == #"{"manager":"central","state":"poweredOn","otherRoleRefused":true}"# + "\n")

        // BlueZ's own client sees the same air on the private bus.
        let bluetoothctl = try await Child(
            "/usr/bin/bluetoothctl", ["devices"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": address])
        let listed = await bluetoothctl.finish()
        #expect(listed.stdout.contains("Device C0:54:52:4D:00:01 PayTerm-01"), "\(listed)")

        // Reload to the peripheral role: same sim (same pids), central methods now refused.
        writeFile(agent.configPath, RunningAgent.config(role: "peripheral", plugins: ("Diagnostics", "Diagnostics")))
        agent.signal(SIGHUP)
        #expect(await agent.notify.next()?.hasPrefix("RELOADING=1\n") == true)
        #expect(await agent.notify.next() == "READY=1\nSTATUS=peripheral role running (config \(agent.configPath))")
        #expect(pids.allSatisfy(processAlive), "the sim kept running across the role switch")
        let again = try JSON(parsing: try await blectl(socket + ["--json", "status"]).stdout)
        #expect(again["sim"]?["busAddress"]?.stringValue == address, "\(again)")
        #expect(
            try await blectl(socket + ["devices"]).stderr
                == "blectl: agent error: the central role is not running (-32011)\n"
        )
        let published = try await blectl(socket + ["--json", "call", "peripheral.services"])
        #expect(published.stdout == #"{"services":[]}"# + "\n", "\(again)")
        // The peripheral commands' tables (nothing published by Diagnostics).
        #expect(try await blectl(socket + ["published"]).stdout == "KIND  UUID  PROPERTIES\n")
        #expect(try await blectl(socket + ["subscribers"]).stdout == "CENTRAL  CHARACTERISTIC  MTU\n")
        let update = try await blectl(socket + ["update", "2a19", "5a", "--hex"])
        #expect(update.status == 1)
        #expect(
            update.stderr
                == "blectl: agent error: characteristicNotFound: no published characteristic 00002a19-0000-1000-8000-00805f9b34fb (-32020)\n"
        )
        // blesim serves LEAdvertisingManager1: advertising starts.
        let advertise = try await blectl(socket + ["advertise", "start", "--name", "gw"])
        #expect(advertise.status == 0, "\(advertise)")
        #expect(try await blectl(socket + ["advertise", "stop"]).stdout == "advertising stopped\n")

        let stopped = await agent.stop()
        #expect(stopped.status == 0)
        #expect(stopped.stderr.contains("sim: stopping blesim"))
        for pid in pids { #expect(!processAlive(pid), "child \(pid) gone after SIGTERM") }
    }

    @Test("a reload from sim to bluez stops blesim and the private bus (reaped, no orphans); status then shows no sim")
    func switchAwayFromSim() async throws {
        let config = RunningAgent.config(role: "central", plugins: ("Diagnostics", "Diagnostics"))
        let agent = try await RunningAgent(config: config)
        #expect(await agent.child.waitForStderr(containing: "blesim pid"))
        let pids = Self.childPIDs(in: agent.child.stderrText)
        #expect(pids.count == 2 && pids.allSatisfy(processAlive))

        writeFile(agent.configPath, config.replacing(#""backend": "sim""#, with: #""backend": "bluez""#))
        agent.signal(SIGHUP)
        #expect(await agent.notify.next()?.hasPrefix("RELOADING=1\n") == true)
        #expect(await agent.notify.next()?.hasPrefix("READY=1\n") == true)
        for pid in pids { #expect(!processAlive(pid), "child \(pid) stopped by the switch to bluez") }
        let status = try JSON(parsing: try await blectl(["--socket", agent.socketPath, "--json", "status"]).stdout)
        #expect(status["backend"] == "bluez")
        #expect(status["sim"] == nil)
        #expect(await agent.stop().status == 0)
    }

    @Test(
        "SIGKILL of the agent takes its children with it: the private bus and blesim get their parent-death signal and exit"
    )
    func childrenDieWithTheAgent() async throws {
        let agent = try await RunningAgent(
            config: RunningAgent.config(role: "central", plugins: ("Diagnostics", "Diagnostics")))
        #expect(await agent.child.waitForStderr(containing: "blesim pid"))
        let pids = Self.childPIDs(in: agent.child.stderrText)
        try #require(pids.count == 2, "\(agent.child.stderrText)")
        #expect(pids.allSatisfy(processAlive))
        // A moment after READY the agent's threads are all up; the children
        // were forked from its shared loop's thread long before.
        agent.signal(SIGKILL)
        // Not our children: each is watched through a pidfd on the shared loop, readable once it has exited.
        for pid in pids {
            let exited = await ChildProcess.waitForExit(of: pid, timeout: .seconds(30))
            #expect(exited, "child \(pid) still running 30 s after the agent was SIGKILLed")
            if !exited { kill(pid, SIGKILL) }
        }
        #expect(await agent.child.finish().status == 128 + SIGKILL)
    }

    /// The bus and blesim pids from the agent's `occurrence`th `sim: private bus ... (pid N), blesim pid M` line.
    static func childPIDs(in log: String, occurrence: Int = 1) -> [Int32] {
        let lines = log.split(separator: "\n").filter { $0.contains("sim: private bus") }
        guard lines.count >= occurrence, occurrence > 0 else { return [] }
        let line = String(lines[occurrence - 1])
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
