import BLETesting
import Glibc
import JSON
import Testing

/// The lane choosing among terminals at different and changing distances
/// (Fixtures/payment-moving.json: Move-T1 at 1.0 m, Move-T2 at 1.15 m,
/// 1.2 dB apart with 1.5 dB of noise; margin 6 dB, dwell 1 s), moved with blesim's Control1.Move.
@Suite("PaymentTerminalScanner choosing among moving terminals", .serialized)
struct PaymentTerminalSelectionTests {
    static let addresses = ["Move-T1": "C0:54:52:4D:30:01", "Move-T2": "C0:54:52:4D:30:02"]

    /// How many times the agent logged a selection so far.
    static func selections(_ agent: LaneAgent) -> [String] {
        agent.child.stderrText.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: "terminal selected: ", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { return nil }
            return String(parts[1].prefix { $0 != " " })
        }
    }

    @Test(
        "two terminals at similar distance: the lane keeps its choice while the other is slightly nearer (hysteresis, no flapping), switches once the other is clearly nearer for the dwell, and returns when that one walks away; pos.pay charges the chosen one"
    )
    func choosesAmongMovingTerminals() async throws {
        let bench = try await PaymentTerminalBench(scenario: "payment-moving.json")
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }
        let agent = try await LaneAgent(
            bench: bench, directory: directory,
            scanner: #"{"rssiThreshold": -75, "margin": 6, "dwell": 1, "paymentDeadlineSeconds": 10}"#)
        defer { agent.child.signal(SIGTERM) }
        try #require(await agent.child.waitForStderr(containing: ": terminal MT-"))
        let first = try #require(Self.selections(agent).first)
        let other = first == "Move-T1" ? "Move-T2" : "Move-T1"
        let firstAddress = try #require(Self.addresses[first])
        let otherAddress = try #require(Self.addresses[other])
        try await bench.control("Move", "sd", [firstAddress, "1.0"])

        // The other terminal nearer, but within the margin (0.7 m against 1.0 m: about 3 dB of 6): once
        // the lane's table ranks it first, the choice must not move, however long (here 2.5 times the
        // dwell, so that a selector without the margin would have switched).
        try await bench.control("Move", "sd", [otherAddress, "0.7"])
        var rankedSince: ContinuousClock.Instant?
        var polls = 0
        while rankedSince.map({ ContinuousClock.now - $0 < .milliseconds(2500) }) ?? true {
            polls += 1
            guard polls < 5000 else {
                Issue.record("the table never ranked \(other) first for 2.5 s")
                break
            }
            let listed = try #require(try await agent.call("pos.terminals"))
            let terminals = listed["terminals"]?.arrayValue ?? []
            if terminals.first?["name"]?.stringValue == other {
                rankedSince = rankedSince ?? .now
            } else {
                rankedSince = nil
            }
            let selected = terminals.first { $0["selected"] == true }?["name"]?.stringValue
            #expect(selected == first, "the choice moved to a terminal nearer only within the margin: \(listed)")
            if selected != first { break }
        }
        #expect(Self.selections(agent) == [first], "no flapping: \(Self.selections(agent))")

        // Clearly nearer (0.3 m: about 10 dB stronger): the lane switches after the dwell.
        let moved = ContinuousClock.now
        try await bench.control("Move", "sd", [otherAddress, "0.3"])
        #expect(await agent.child.waitForStderr(containing: "terminal selected: \(other)"))
        #expect(ContinuousClock.now - moved >= .seconds(1), "the switch waited for the dwell")
        let otherID = other == "Move-T1" ? "MT-1" : "MT-2"
        #expect(await agent.child.waitForStderr(containing: "terminal \(otherID), Acme Payments"))
        #expect(Self.selections(agent) == [first, other], "one switch: \(Self.selections(agent))")
        let paid = try #require(try await agent.call("pos.pay", #"{"amount":700,"currency":"EUR","reference":"near"}"#))
        #expect(paid["terminal"]?.stringValue == otherID, "\(paid)")
        #expect(try await bench.terminalTransactions(otherAddress).map(\.charges) == [1])
        #expect(try await bench.terminalTransactions(firstAddress).isEmpty)

        // It walks away (30 m: far below the threshold): the lane drops it and takes the first again.
        try await bench.control("Move", "sd", [otherAddress, "30"])
        #expect(await agent.child.waitForStderr(containing: "terminal lost: \(other)"))
        let firstID = first == "Move-T1" ? "MT-1" : "MT-2"
        #expect(await agent.child.waitForStderr(containing: "terminal selected: \(first)", occurrences: 2))
        #expect(Self.selections(agent) == [first, other, first], "\(Self.selections(agent))")
        #expect(await agent.child.waitForStderr(containing: "terminal \(firstID), Acme Payments", occurrences: 2))
        let back = try #require(try await agent.call("pos.pay", #"{"amount":800,"currency":"EUR","reference":"back"}"#))
        #expect(back["terminal"]?.stringValue == firstID, "\(back)")
        #expect(try await bench.terminalTransactions(firstAddress).map(\.charges) == [1])
    }
}
