import BLETesting
import Glibc
import JSON
import Testing

@Suite("bleagent when its backend dies under it", .serialized)
struct SimLossProcessTests {
    @Test(
        "blesim, then the private bus, killed under a running role: each time the role is reported failed with why, the simulator (blesim alone when only it died) is started again and the role runs on it"
    )
    func simulatorDiesUnderTheRole() async throws {
        let config = RunningAgent.config(role: "central", plugins: ("Diagnostics", "Diagnostics")).replacing(
            #""backend": "sim","#, with: #""backend": "sim", "bluez": { "readIntervalMicroseconds": 250 },"#)
        let (agent, states, first) = try await Self.start(config)
        let socket = ["--socket", agent.socketPath]
        // A client of the private bus (as bluetoothctl would be), watching who owns org.bluez.
        let bus = try #require(
            try JSON(parsing: try await blectl(socket + ["--json", "status"]).stdout)["sim"]?["busAddress"]?
                .stringValue)
        let monitor = try await Child(
            "/usr/bin/dbus-monitor",
            [
                "--address", bus,
                "type='signal',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='org.bluez'",
            ])
        #expect(await monitor.waitForStdout(containing: "member=NameLost"), "monitoring: \(monitor.stderrText)")

        // blesim alone: the agent's bus connection lives, but what it served is gone.
        kill(first[1], SIGKILL)
        let lost = try await Self.nextRoleState(of: states, trigger: "backend-lost", state: "failed")
        let reason = lost?["reason"]?.stringValue ?? ""
        #expect(reason.hasPrefix("the sim backend was lost: blesim exited (killed by signal 9)"), "\(reason)")
        #expect(reason.hasSuffix("starting again in 1 s (attempt 1)"), "\(reason)")
        // systemd hears it (STATUS=, as `systemctl status` shows it), and the return.
        #expect(await agent.notify.next() == "STATUS=central role failed (config \(agent.configPath))")
        #expect(await agent.notify.next() == "STATUS=central role running (config \(agent.configPath))")
        #expect(try await Self.nextRoleState(of: states, trigger: "backend-restart", state: "running") != nil)
        #expect(await agent.child.waitForStderr(containing: "blesim pid", occurrences: 2))
        let second = SimBackendProcessTests.childPIDs(in: agent.child.stderrText, occurrence: 2)
        #expect(second.count == 2 && second.allSatisfy(processAlive), "\(agent.child.stderrText)")
        #expect(
            second.first == first.first && second.last != first.last,
            "a new blesim on the same bus: \(first) then \(second)")
        let ble = try await blectl(socket + ["--json", "call", "diag.ble"])
        #expect(ble.stdout.contains(#""manager":"central","state":"poweredOn""#), "\(ble)")
        // The bus client stayed connected and saw org.bluez lost and owned again.
        #expect(
            await monitor.waitForStdout("org.bluez lost and owned again") {
                $0.ranges(of: #"string "org.bluez""#).count >= 2
            }, "\(monitor.stdoutText)")
        #expect(processAlive(monitor.pid))
        monitor.signal(SIGKILL)
        _ = await monitor.finish()

        // Now the private bus: the connection closes under the role (or blesim, on the same bus, exits first).
        try #require(second.count == 2)
        kill(second[0], SIGKILL)
        let busLost = try await Self.nextRoleState(of: states, trigger: "backend-lost", state: "failed")
        let busReason = busLost?["reason"]?.stringValue ?? ""
        #expect(
            busReason.hasPrefix("the sim backend was lost: its bus connection closed (the peer closed the connection)")
                || busReason.hasPrefix("the sim backend was lost: the simulator's bus exited (killed by signal 9)")
                || busReason.hasPrefix("the sim backend was lost: blesim exited"), "\(busReason)")
        #expect(try await Self.nextRoleState(of: states, trigger: "backend-restart", state: "running") != nil)
        let status = try JSON(parsing: try await blectl(socket + ["--json", "status"]).stdout)
        #expect(status["roleState"]?["state"] == "running", "\(status)")
        // The new connection reads as configured.
        let reads = status["limits"]?["busReads"]
        #expect(reads?["readIntervalMicroseconds"] == 250, "\(status)")
        #expect((reads?["reads"]?.intValue ?? 0) > 0, "\(status)")
        // Both losses are counted, each ended by a start that left the role running.
        let recovery = status["recovery"]
        #expect(recovery?["backendLosses"] == 2, "\(status)")
        #expect(recovery?["restartsSucceeded"] == 2, "\(status)")
        #expect((recovery?["restarts"]?.intValue ?? 0) >= 2, "\(status)")
        #expect(recovery?["pendingRestart"] == .null, "\(status)")
        let lastLoss = recovery?["lastLoss"]?.stringValue ?? ""
        #expect(!lastLoss.isEmpty && busReason.contains(lastLoss), "\(lastLoss) in \(busReason)")
        let human = try await blectl(socket + ["status"]).stdout
        let restarts = recovery?["restarts"]?.intValue ?? 0
        #expect(
            human.contains("2 backends lost (last: \(lastLoss)); \(restarts) restarts, 2 left the role running\n"),
            "\(human)")
        #expect(await agent.child.waitForStderr(containing: "blesim pid", occurrences: 3))
        let third = SimBackendProcessTests.childPIDs(in: agent.child.stderrText, occurrence: 3)
        #expect(third.count == 2 && third.allSatisfy(processAlive), "\(agent.child.stderrText)")
        #expect(!second.contains { third.contains($0) }, "a new bus and blesim: \(second) then \(third)")

        states.signal(SIGKILL)
        _ = await states.finish()
        let stopped = await agent.stop()
        #expect(stopped.status == 0)
        for pid in third { #expect(!processAlive(pid), "child \(pid) gone after SIGTERM") }
    }

    @Test(
        "the private bus killed under a running peripheral: the role is reported failed, started again on a new simulator, and advertises there"
    )
    func busDiesUnderThePeripheral() async throws {
        let (agent, states, first) = try await Self.start(
            RunningAgent.config(role: "peripheral", plugins: ("Diagnostics", "Diagnostics")))
        let socket = ["--socket", agent.socketPath]
        kill(first[0], SIGKILL)
        let lost = try await Self.nextRoleState(of: states, trigger: "backend-lost", state: "failed")
        #expect(lost?["role"] == "peripheral", "\(String(describing: lost))")
        #expect(try await Self.nextRoleState(of: states, trigger: "backend-restart", state: "running") != nil)
        let advertise = try await blectl(socket + ["advertise", "start", "--name", "again"])
        #expect(advertise.status == 0, "\(advertise)")
        #expect(try await blectl(socket + ["advertise", "stop"]).stdout == "advertising stopped\n")
        states.signal(SIGKILL)
        _ = await states.finish()
        #expect(await agent.stop().status == 0)
    }

    /// An agent started with `config`, a `blectl events --kind state` following it, and its simulator's pids (bus,
    /// blesim).
    static func start(_ config: String) async throws -> (agent: RunningAgent, states: Child, pids: [Int32]) {
        let agent = try await RunningAgent(config: config)
        #expect(await agent.child.waitForStderr(containing: "blesim pid"))
        let states = try await Child(
            "\(buildDirectory)/blectl", ["--socket", agent.socketPath, "--json", "events", "--kind", "state"])
        #expect(await states.waitForStderr(containing: "streaming events"))
        let pids = SimBackendProcessTests.childPIDs(in: agent.child.stderrText)
        try #require(pids.count == 2, "\(agent.child.stderrText)")
        return (agent, states, pids)
    }

    /// The role state of the next `state` event from `events` with `trigger` and role state `state`.
    static func nextRoleState(of events: Child, trigger: String, state: String) async throws -> JSON? {
        let line = await events.waitForStdoutLine {
            $0.contains(#""trigger":"\#(trigger)""#) && $0.contains(#""roleState":{"state":"\#(state)""#)
        }
        return try line.map { try JSON(parsing: $0)["data"]?["roleState"] } ?? nil
    }
}
