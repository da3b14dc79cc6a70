import BLETesting
import Glibc
import JSON
import Testing

/// `central.connect` keeps a device wanted: a link the peer (or the air) drops
/// is connected again by the agent, as against the real bluetoothd in the VM
/// (Tests/VM/scenarios.sh, where the peripheral side drops it), and the
/// subscription delivers values again on the new link.
@Suite("central.connect reconnects after a link loss", .serialized, .timeLimit(.minutes(3)))
struct CentralReconnectProcessTests {
    static let heartRate = "ba94a06f-402a-530d-ac5f-82fe71e3430e"
    static let heartRateAddress = "D4:48:52:4D:00:0A"

    @Test(
        "a link dropped by the peer: disconnected (with an error), connected again by itself, values flow again; central.disconnect releases it"
    )
    func droppedLinkIsRestored() async throws {
        let agent = try await RunningAgent(
            config: RunningAgent.config(role: "central", plugins: ("Diagnostics", "Diagnostics")))
        let socket = ["--socket", agent.socketPath]
        let bus = try #require(
            try JSON(parsing: try await blectl(socket + ["--json", "status"]).stdout)["sim"]?["busAddress"]?.stringValue
        )
        let found = try await Child("\(buildDirectory)/blectl", socket + ["--json", "events", "--kind", "discovered"])
        #expect(await found.waitForStderr(containing: "streaming events"))
        #expect(try await blectl(socket + ["scan", "start"]).status == 0)
        #expect(await found.waitForStdout(containing: Self.heartRate))
        found.signal(SIGKILL)
        _ = await found.finish()
        #expect(try await blectl(socket + ["connect", Self.heartRate]).status == 0)
        let subscribe = #"{"id":"\#(Self.heartRate)","characteristic":"2a37"}"#
        #expect(try await blectl(socket + ["--json", "call", "central.subscribe", subscribe]).status == 0)

        let dropped = try await Child(
            "\(buildDirectory)/blectl", socket + ["--json", "events", "--kind", "disconnected"])
        #expect(await dropped.waitForStderr(containing: "streaming events"))
        // Listening before the drop: the reconnect may come 250 ms after it, sooner than a new client streams.
        let after = try await Child(
            "\(buildDirectory)/blectl", socket + ["--json", "events", "--kind", "connected", "--kind", "value"])
        #expect(await after.waitForStderr(containing: "streaming events"))
        let drop = try await Child(
            "/usr/bin/dbus-send",
            [
                "--bus=\(bus)", "--print-reply", "--dest=org.bluez", "/org/blesim", "org.blesim.Control1.DropLink",
                "string:\(Self.heartRateAddress)",
            ]
        ).finish()
        #expect(drop.status == 0, "\(drop.stderr)")
        #expect(await dropped.waitForStdout(containing: Self.heartRate))
        dropped.signal(SIGKILL)
        let lost = await dropped.finish().stdout
        #expect(!lost.contains(#""error":null"#), "a link loss carries its error: \(lost)")

        // Without the reconnect loop nothing connects it again: this waits in vain.
        // Lines in order: the reconnect, then a value after it (values before the drop come earlier).
        #expect(await after.waitForStdoutLine { $0.contains(#""kind":"connected""#) } != nil)
        #expect(await after.waitForStdoutLine { $0.contains(#""characteristic":"00002a37"#) } != nil)
        after.signal(SIGKILL)
        _ = await after.finish()
        let devices = try await blectl(socket + ["devices"]).stdout
        #expect(devices.split(separator: "\n").contains { $0.hasPrefix(Self.heartRate) && $0.hasSuffix("true") })

        // central.disconnect releases it: no reconnect.
        #expect(try await blectl(socket + ["disconnect", Self.heartRate]).status == 0)
        let listed = try await blectl(socket + ["--json", "devices"]).stdout
        #expect(try JSON(parsing: listed)["devices"]?.arrayValue?.contains { $0["connected"] == true } == false)
        #expect(await agent.stop().status == 0)
    }
}
