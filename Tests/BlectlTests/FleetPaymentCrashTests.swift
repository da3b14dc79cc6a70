import BLETesting
import Glibc
import JSON
import Testing

/// Payments to the back office through the durable outbox, with the lane
/// SIGKILLed at random points of payments (as PaymentTerminalCrashTests does)
/// and the broker restarted or down between runs: a back-office consumer
/// (a persistent MQTT session, QoS 1) sees every final state at least once,
/// and deduplicated by key exactly once, matching the journal.
@Suite("fleet: payments reach the back office, none lost", .serialized)
struct FleetPaymentCrashTests {
    static let topic = "bleagent/lane-f/payments"

    @Test(
        "SIGKILL of the lane at random points of payments and broker restarts (BLEAGENT_FLEET_CRASH_RUNS, default 24; BLEAGENT_CRASH_SEED replays): every journalled payment's final state reaches the consumer, and after deduplication by key exactly once, as the journal has it"
    )
    func noPaymentLost() async throws {
        let runs = PaymentTerminalCrashTests.environment("BLEAGENT_FLEET_CRASH_RUNS").flatMap(Int.init) ?? 24
        let seed =
            PaymentTerminalCrashTests.environment("BLEAGENT_CRASH_SEED").flatMap(UInt64.init)
            ?? UInt64.random(in: 1...UInt64(UInt32.max))
        print("FleetPaymentCrashTests: \(runs) runs, seed \(seed) (replay: BLEAGENT_CRASH_SEED=\(seed))")
        var random = SplitMix64(seed: seed)
        let points = PaymentTerminalCrashTests.KillPoint.allCases
        let plan = (0..<runs).map { index -> PaymentTerminalCrashTests.Run in
            let point = points[Int(random.next() % UInt64(points.count))]
            let declines = random.next() % 4 == 0
            return PaymentTerminalCrashTests.Run(
                index: index, point: point, reference: "fleet-\(index)" + (declines ? "-D" : ""),
                amount: Int(1 + random.next() % 100_000))
        }
        let bench = try await PaymentTerminalBench(scenario: "payment-crash.json")
        let broker = try await MosquittoBroker()
        // The back office: a persistent session made first, so that the broker keeps its messages through
        // the consumer's and the broker's restarts; then the consumer that prints them.
        let session = ["-c", "-i", "back-office", "-q", "1", "-t", Self.topic]
        _ = try await Child(MosquittoTools.subscribe, broker.clientArguments + session + ["-E"]).finish()
        let consumer = try await Child(
            "/usr/bin/stdbuf", ["-oL", MosquittoTools.subscribe] + broker.clientArguments + session)
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }
        let fleet = #""fleet": { "broker": "\#(broker.url)", "node": "lane-f" }"#
        let crashes = PaymentTerminalCrashTests()

        var done: [PaymentTerminalCrashTests.Run] = []
        var brokerRestarts = 0
        var late = 0
        for run in plan {
            // Every fourth run the broker is down for the whole run; the one after, it restarts mid-way.
            let brokerDown = run.index % 4 == 2
            if brokerDown { await broker.stop() }
            let agent = try await LaneAgent(
                bench: bench, directory: directory,
                crashAt: run.point.isHook ? "\(run.point.rawValue):\(run.reference)" : nil, fleet: fleet)
            try #require(
                await agent.child.waitForStderr(containing: "terminal CT-1, Acme Payments"), "run \(run.index)")
            try await crashes.settleAndCheck(
                agent, bench: bench, done: done, context: "fleet run \(run.index) (seed \(seed))")
            if run.index % 4 == 3 {
                try await broker.restart()
                brokerRestarts += 1
            }
            if try await !crashes.crash(agent, bench: bench, during: run) { late += 1 }
            if brokerDown {
                try await broker.restart()
                brokerRestarts += 1
            }
            done.append(run)
        }
        let last = try await LaneAgent(bench: bench, directory: directory, fleet: fleet)
        try #require(await last.child.waitForStderr(containing: "terminal CT-1, Acme Payments"))
        try await crashes.settleAndCheck(last, bench: bench, done: done, context: "after the last run (seed \(seed))")
        let journal = try await last.payments()
        let finals = Dictionary(
            uniqueKeysWithValues: journal.compactMap { payment -> (String, String)? in
                guard payment["phase"] == "final", let id = payment["transactionId"]?.stringValue,
                    let state = payment["state"]?.stringValue
                else { return nil }
                return (id, state)
            })
        #expect(finals.count == done.filter { $0.point != .beforeAccepted }.count, "every accepted payment settled")

        // The consumer sees every final state: wait for the last one to arrive (each line is one record).
        let arrived = await consumer.waitForStdout("every final state") { text in
            let records = Self.records(text)
            return finals.keys.allSatisfy { id in records.contains { $0.key == id && $0.phase == "final" } }
        }
        #expect(arrived, "finals the consumer never saw")
        _ = await last.kill(SIGTERM)
        consumer.signal(SIGTERM)
        let seenBefore = consumer.stdoutText
        let records = Self.records(seenBefore + (await consumer.finish()).stdout)
        let finalRecords = records.filter { $0.phase == "final" }
        let deduplicated = Dictionary(grouping: finalRecords, by: \.key)
        #expect(Set(deduplicated.keys) == Set(finals.keys), "the consumer's finals are the journal's")
        for (key, copies) in deduplicated {
            #expect(Set(copies.map(\.state)) == [finals[key] ?? "?"], "\(key): \(copies.map(\.state)) vs the journal")
        }
        let journalled = Set(journal.compactMap { $0["transactionId"]?.stringValue })
        let accepted = Set(records.filter { $0.phase == "accepted" }.map(\.key))
        #expect(accepted == journalled, "every journalled payment's acceptance reached the consumer")
        print(
            "FleetPaymentCrashTests: \(runs) runs (\(late) killed only after the payment finished), "
                + "\(brokerRestarts) broker restarts; \(finals.count) final payments; "
                + "the consumer got \(records.count) records (\(finalRecords.count) finals, "
                + "\(finalRecords.count - deduplicated.count) duplicates dropped by key)")
    }

    struct Record {
        var key: String
        var phase: String
        var state: String?
    }

    /// The payment records in mosquitto_sub's output (one JSON envelope per line).
    static func records(_ text: String) -> [Record] {
        text.split(separator: "\n").compactMap { line in
            guard let envelope = try? JSON(parsing: Array(line.utf8)), let key = envelope["key"]?.stringValue,
                let phase = envelope["record"]?["phase"]?.stringValue
            else { return nil }
            return Record(key: key, phase: phase, state: envelope["record"]?["state"]?.stringValue)
        }
    }
}
