import BLETesting
import Glibc
import IO
import JSON
import Testing

/// After a SIGKILL, an agent started again on the same state directory
/// restores what `central.connect` and `central.subscribe` asked for: the
/// device is connected again, its subscription's values arrive as `value`
/// events with no new `central.subscribe`, and agent.status says what was restored.
@Suite("central.subscribe survives a SIGKILL", .serialized, .timeLimit(.minutes(4)))
struct CentralRestartProcessTests {
    static let heartRate = CentralReconnectProcessTests.heartRate

    static func valueEvents(_ socket: [String]) async throws -> Child {
        let events = try await Child(
            "\(buildDirectory)/blectl", socket + ["--json", "events", "--kind", "value", "--kind", "connected"])
        #expect(await events.waitForStderr(containing: "streaming events"))
        return events
    }

    @Test(
        "SIGKILL after connect and subscribe: the restarted agent reconnects, value events for 2A37 arrive again, agent.status names the restored subscription"
    )
    func subscriptionRestoredAfterSIGKILL() async throws {
        let directory = makeTemporaryDirectory()
        defer { BlockingPool.shared.submit { removeTree(directory) } }
        let config = RunningAgent.config(role: "central", plugins: ("Diagnostics", "Diagnostics"))
        do {
            let agent = try await RunningAgent(config: config, directory: directory)
            let socket = ["--socket", agent.socketPath]
            let found = try await Child(
                "\(buildDirectory)/blectl", socket + ["--json", "events", "--kind", "discovered"])
            #expect(await found.waitForStderr(containing: "streaming events"))
            #expect(try await blectl(socket + ["scan", "start"]).status == 0)
            #expect(await found.waitForStdout(containing: Self.heartRate))
            found.signal(SIGKILL)
            _ = await found.finish()
            #expect(try await blectl(socket + ["connect", Self.heartRate]).status == 0)
            let values = try await Self.valueEvents(socket)
            let subscribe = #"{"id":"\#(Self.heartRate)","characteristic":"2a37"}"#
            #expect(try await blectl(socket + ["--json", "call", "central.subscribe", subscribe]).status == 0)
            #expect(await values.waitForStdout(containing: #""characteristic":"00002a37"#), "values before the kill")
            values.signal(SIGKILL)
            _ = await values.finish()
            agent.signal(SIGKILL)
            _ = await agent.child.finish()
        }
        #expect(fileExists("\(directory)/state"), "the state directory is kept")

        let again = try await RunningAgent(config: config, directory: directory)
        let socket = ["--socket", again.socketPath]
        let status = try JSON(parsing: try await blectl(socket + ["--json", "status"]).stdout)
        let restored = try #require(status["central"]?["restored"], "\(status)")
        let subscriptions = restored["subscriptions"]?.arrayValue ?? []
        #expect(
            subscriptions.contains {
                $0["id"]?.stringValue == Self.heartRate
                    && $0["characteristic"]?.stringValue?.hasPrefix("00002a37") == true
            }, "\(restored)")
        #expect(restored["connections"]?.arrayValue?.contains(.string(Self.heartRate)) == true, "\(restored)")
        // The new blesim lists the device once discovery hears it; the manager then connects it
        // again and restores the subscription, and the control API forwards its values.
        let values = try await Self.valueEvents(socket)
        #expect(try await blectl(socket + ["scan", "start"]).status == 0)
        #expect(await values.waitForStdout(containing: #""kind":"connected""#), "connected again by itself")
        #expect(
            await values.waitForStdout(containing: #""characteristic":"00002a37"#),
            "values again with no new central.subscribe; agent log: \(again.child.stderrText)")
        values.signal(SIGKILL)
        _ = await values.finish()

        // central.unsubscribe forgets it for the next start too.
        let unsubscribe = #"{"id":"\#(Self.heartRate)","characteristic":"2a37"}"#
        #expect(try await blectl(socket + ["--json", "call", "central.unsubscribe", unsubscribe]).status == 0)
        #expect(await again.stop().status == 0)
    }
}
