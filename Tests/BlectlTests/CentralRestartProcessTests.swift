import Glibc
import JSON
import Testing

/// After a SIGKILL, an agent started again on the same state directory
/// restores what `central.connect` and `central.subscribe` asked for: the
/// device is connected again, its subscription's values arrive as `value`
/// events with no new `central.subscribe`, and agent.status says what was restored.
@Suite("central.subscribe survives a SIGKILL", .serialized, .timeLimit(.minutes(4)))
struct CentralRestartProcessTests {
    static let heartRate = CentralReconnectProcessTests.heartRate

    static func valueEvents(_ socket: [String]) throws -> Child {
        let events = try Child(
            "\(buildDirectory)/blectl", socket + ["--json", "events", "--kind", "value", "--kind", "connected"])
        #expect(events.waitForStderr(containing: "streaming events"))
        return events
    }

    @Test(
        "SIGKILL after connect and subscribe: the restarted agent reconnects, value events for 2A37 arrive again, agent.status names the restored subscription"
    )
    func subscriptionRestoredAfterSIGKILL() throws {
        let directory = makeTemporaryDirectory()
        defer { _ = "rm -rf '\(directory)'".withCString { system($0) } }
        let config = RunningAgent.config(role: "central", plugins: ("Diagnostics", "Diagnostics"))
        do {
            let agent = try RunningAgent(config: config, directory: directory)
            let socket = ["--socket", agent.socketPath]
            let found = try Child("\(buildDirectory)/blectl", socket + ["--json", "events", "--kind", "discovered"])
            #expect(found.waitForStderr(containing: "streaming events"))
            #expect(try blectl(socket + ["scan", "start"]).status == 0)
            #expect(found.waitForStdout(containing: Self.heartRate))
            kill(found.pid, SIGKILL)
            _ = found.finish()
            #expect(try blectl(socket + ["connect", Self.heartRate]).status == 0)
            let values = try Self.valueEvents(socket)
            let subscribe = #"{"id":"\#(Self.heartRate)","characteristic":"2a37"}"#
            #expect(try blectl(socket + ["--json", "call", "central.subscribe", subscribe]).status == 0)
            #expect(values.waitForStdout(containing: #""characteristic":"00002a37"#), "values before the kill")
            kill(values.pid, SIGKILL)
            _ = values.finish()
            agent.signal(SIGKILL)
            _ = agent.child.finish()
        }
        #expect(fileExists("\(directory)/state"), "the state directory is kept")

        let again = try RunningAgent(config: config, directory: directory)
        let socket = ["--socket", again.socketPath]
        let status = try JSON(parsing: try blectl(socket + ["--json", "status"]).stdout)
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
        let values = try Self.valueEvents(socket)
        #expect(try blectl(socket + ["scan", "start"]).status == 0)
        #expect(values.waitForStdout(containing: #""kind":"connected""#), "connected again by itself")
        #expect(
            values.waitForStdout(containing: #""characteristic":"00002a37"#),
            "values again with no new central.subscribe; agent log: \(again.child.stderrText)")
        kill(values.pid, SIGKILL)
        _ = values.finish()

        // central.unsubscribe forgets it for the next start too.
        let unsubscribe = #"{"id":"\#(Self.heartRate)","characteristic":"2a37"}"#
        #expect(try blectl(socket + ["--json", "call", "central.unsubscribe", unsubscribe]).status == 0)
        #expect(again.stop().status == 0)
    }
}
