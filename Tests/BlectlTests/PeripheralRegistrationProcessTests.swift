import BLETesting
import Glibc
import IO
import JSON
import Testing

/// A peripheral whose GATT application BlueZ refused to register is not
/// `running`: agent.status says `degraded` with the refusal, a role `state`
/// event says so, and a later registration that succeeds makes it `running`.
@Suite("a refused GATT registration degrades the peripheral role", .serialized, .timeLimit(.minutes(3)))
struct PeripheralRegistrationProcessTests {
    static func failRegistration(_ bus: String, _ kind: String) async throws {
        let result = try await Child(
            "/usr/bin/dbus-send",
            [
                "--bus=\(bus)", "--print-reply", "--dest=org.bluez", "/org/blesim",
                "org.blesim.Control1.FailRegistration",
                "string:\(kind)", "uint32:1", "string:org.bluez.Error.Failed", "string:No GATT server here",
            ]
        ).finish()
        #expect(result.status == 0, "\(result.stderr)")
    }

    static func roleState(_ socket: [String]) async throws -> JSON? {
        try JSON(parsing: try await blectl(socket + ["--json", "status"]).stdout)["roleState"]
    }

    @Test(
        "RegisterApplication refused after a power cycle: agent.status is degraded naming the refusal; the next power cycle registers it and the role is running again"
    )
    func refusedApplication() async throws {
        let data = makeTemporaryDirectory()
        defer { BlockingPool.shared.submit { removeTree(data) } }
        writeFile("\(data)/temp", "2314\n")
        let agent = try await RunningAgent(
            config: SensorAggregatorSimTests().agentConfig(
                scenario: "\(repositoryRoot)/sim/scenarios/default.json", data: data))
        let socket = ["--socket", agent.socketPath]
        let bus = try #require(
            try JSON(parsing: try await blectl(socket + ["--json", "status"]).stdout)["sim"]?["busAddress"]?.stringValue
        )
        #expect(
            try await SensorAggregatorSimTests.eventually { try await Self.roleState(socket)?["state"] == "running" },
            "running at start")
        #expect(await agent.child.waitForStderr(containing: "published"), "the application is registered at start")

        let states = try await Child("\(buildDirectory)/blectl", socket + ["--json", "events", "--kind", "state"])
        #expect(await states.waitForStderr(containing: "streaming events"))
        try await Self.failRegistration(bus, "application")
        try await SensorAggregatorSimTests.setPowered(bus, false)
        try await SensorAggregatorSimTests.setPowered(bus, true)
        #expect(await states.waitForStdout(containing: #""state":"degraded""#), "a role state event says degraded")
        let degraded = try #require(try await Self.roleState(socket))
        #expect(degraded["state"] == "degraded", "\(degraded)")
        let reason = degraded["reason"]?.stringValue ?? ""
        #expect(reason.contains("GATT application not registered"), "\(reason)")
        #expect(reason.contains("No GATT server here"), "\(reason)")

        try await SensorAggregatorSimTests.setPowered(bus, false)
        try await SensorAggregatorSimTests.setPowered(bus, true)
        #expect(
            try await SensorAggregatorSimTests.eventually { try await Self.roleState(socket)?["state"] == "running" },
            "registered again: running")
        states.signal(SIGKILL)
        _ = await states.finish()
        #expect(await agent.stop().status == 0)
    }
}
