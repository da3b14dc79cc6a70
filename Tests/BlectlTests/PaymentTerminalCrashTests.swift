import BLETesting
import Glibc
import JSON
import Testing

/// SIGKILL of the lane at randomised points of payments, with real processes:
/// one private bus and one blesim (Fixtures/payment-crash.json: terminal CT-1,
/// final 400 ms after a request, references ending in -D declined) serve every
/// run; only the agent is killed and started again, on the same journal.
@Suite("PaymentTerminalScanner killed during payments", .serialized)
struct PaymentTerminalCrashTests {
    static let terminal = "C0:54:52:4D:20:01"

    /// Where in a payment's life the agent dies.
    enum KillPoint: String, CaseIterable {
        /// pos.pay validated, before `accepted` is journalled (the scanner's hook).
        case beforeAccepted = "before-accepted"
        /// `accepted` synced, before the write (the hook).
        case afterAccepted = "after-accepted"
        /// While the write is in flight: blesim delays the terminal's answers by
        /// ``PaymentTerminalCrashTests/writeDelay`` and the test kills the agent when the `accepted`
        /// event arrives (the request may or may not have left; blesim delivers it to the terminal
        /// even though the lane is gone). The only point aimed from outside: a kill that comes after
        /// the payment finished (the machine took longer than the delay to react) is counted, not failed.
        case duringWrite = "during-write"
        /// The terminal acknowledged the write, before `sent` is journalled (the hook).
        case afterWrite = "after-write"
        /// `sent` is journalled, the lane waits for the final status (the hook).
        case afterSent = "after-sent"
        /// The final status arrived, before `final` is journalled (the hook).
        case beforeFinal = "before-final"

        var isHook: Bool { self != .duringWrite }
    }

    /// A run: its payment's reference, amount and where the agent dies.
    struct Run {
        var index: Int
        var point: KillPoint
        var reference: String
        var amount: Int
        var declines: Bool { reference.hasSuffix("-D") }
    }

    /// How long blesim holds the terminal's answers during a `during-write` run: the window the kill
    /// must land in. Each such run costs it once more while the restarted lane waits for the terminal.
    static let writeDelay = "1.5"

    static func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

    @Test(
        "SIGKILL of the agent at random points of payments (BLEAGENT_CRASH_RUNS, default 100; seed printed, BLEAGENT_CRASH_SEED replays it): after each restart every accepted payment is settled final as the terminal decided, the terminal charged each payment at most once, and it has nothing the journal lacks"
    )
    func killedAtRandomPoints() async throws {
        let runs = Self.environment("BLEAGENT_CRASH_RUNS").flatMap(Int.init) ?? 100
        let seed =
            Self.environment("BLEAGENT_CRASH_SEED").flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(UInt32.max))
        print("PaymentTerminalCrashTests: \(runs) runs, seed \(seed) (replay: BLEAGENT_CRASH_SEED=\(seed))")
        var random = SplitMix64(seed: seed)
        let plan = (0..<runs).map { index -> Run in
            let point = KillPoint.allCases[Int(random.next() % UInt64(KillPoint.allCases.count))]
            let declines = random.next() % 4 == 0
            return Run(
                index: index, point: point, reference: "run-\(index)" + (declines ? "-D" : ""),
                amount: Int(1 + random.next() % 100_000))
        }
        let started = ContinuousClock.now
        let bench = try await PaymentTerminalBench(scenario: "payment-crash.json")
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }

        var done: [Run] = []
        var late = 0
        for run in plan {
            let agent = try await LaneAgent(
                bench: bench, directory: directory,
                crashAt: run.point.isHook ? "\(run.point.rawValue):\(run.reference)" : nil)
            try #require(
                await agent.child.waitForStderr(containing: "terminal CT-1, Acme Payments"), "run \(run.index)")
            try await settleAndCheck(agent, bench: bench, done: done, context: "before run \(run.index) (seed \(seed))")
            if try await !crash(agent, bench: bench, during: run) { late += 1 }
            done.append(run)
        }
        let last = try await LaneAgent(bench: bench, directory: directory)
        try #require(await last.child.waitForStderr(containing: "terminal CT-1, Acme Payments"))
        try await settleAndCheck(last, bench: bench, done: done, context: "after the last run (seed \(seed))")
        _ = await last.kill(SIGTERM)

        let counts = Dictionary(grouping: done, by: \.point).mapValues(\.count)
        let charges = try await bench.terminalTransactions(Self.terminal).map(\.charges).reduce(0, +)
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print(
            "PaymentTerminalCrashTests: \(runs) runs in \(Int(seconds.rounded())) s; kill points "
                + KillPoint.allCases.map { "\($0.rawValue) \(counts[$0, default: 0])" }.joined(separator: ", ")
                + " (\(late) of them killed only after the payment finished); \(charges) charges at the terminal")
    }

    /// Pays `run`'s payment and kills the agent at its point; returns once the agent is reaped, `false`
    /// when a `during-write` kill came only after the payment had finished (it ran as a normal payment).
    @discardableResult
    func crash(_ agent: LaneAgent, bench: PaymentTerminalBench, during run: Run) async throws -> Bool {
        var events: Child?
        if run.point == .duringWrite {
            let stream = try await Child(
                "\(buildDirectory)/blectl", agent.socket + ["--json", "events", "--kind", "plugin"])
            #expect(await stream.waitForStderr(containing: "streaming events"))
            events = stream
            try await bench.control("SetDelay", "sd", [Self.terminal, Self.writeDelay])
        }
        let pay = try await Child(
            "\(buildDirectory)/blectl",
            agent.socket + [
                "--json", "call", "pos.pay",
                #"{"amount":\#(run.amount),"currency":"EUR","reference":"\#(run.reference)"}"#,
            ])
        if run.point == .duringWrite {
            #expect(await events?.waitForStdout(containing: #""phase":"accepted""#) == true, "run \(run.index)")
            _ = await agent.kill()
            try await bench.control("SetDelay", "sd", [Self.terminal, "0"])
        } else {
            let status = await agent.waitForDeath()
            #expect(status == 128 + SIGKILL, "run \(run.index): the hook \(run.point.rawValue) did not fire")
        }
        let answer = await pay.finish()
        if let events { _ = await events.finish() }
        if run.point == .duringWrite && answer.status == 0 { return false }
        #expect(answer.status != 0, "run \(run.index): pos.pay answered before the kill: \(answer.stdout)")
        return true
    }

    /// Waits until the restarted `agent` has settled every unsettled payment
    /// (its log names each one), then checks the journal against the terminal.
    func settleAndCheck(
        _ agent: LaneAgent, bench: PaymentTerminalBench, done: [Run], context: String
    ) async throws {
        let references = Dictionary(uniqueKeysWithValues: done.map { ($0.reference, $0) })
        for payment in try await agent.payments() where payment["phase"] != "final" {
            let id = try #require(payment["transactionId"]?.stringValue)
            let run = try #require(references[payment["reference"]?.stringValue ?? ""], "\(payment)")
            let expected = run.declines ? "declined" : "approved"
            let atTerminal = try await bench.terminalTransactions(Self.terminal).filter { $0.transactionID == id }
            try #require(
                await agent.child.waitForStderr(containing: "payment \(id): \(expected)"),
                """
                \(context): \(id) (run \(run.index), killed \(run.point.rawValue)) never settled; \
                the terminal had \(atTerminal); \
                the agent's log:
                \(agent.child.stderrText)
                """)
        }
        let journal = try await agent.payments()
        let terminal = try await bench.terminalTransactions(Self.terminal)
        let byID = Dictionary(terminal.map { ($0.transactionID, $0) }, uniquingKeysWith: { first, _ in first })
        let journalIDs = Set(journal.compactMap { $0["transactionId"]?.stringValue })
        for run in done {
            let inJournal = journal.filter { $0["reference"]?.stringValue == run.reference }
            let atTerminal = terminal.filter { $0.reference == run.reference }
            let where_ = "\(context): run \(run.index) killed \(run.point.rawValue)"
            // No duplicate charge: one transaction per payment at the terminal, charged at most once.
            #expect(atTerminal.count <= 1, "\(where_): the terminal has \(atTerminal)")
            #expect(
                atTerminal.allSatisfy { $0.charges == ($0.state == "approved" ? 1 : 0) }, "\(where_): \(atTerminal)")
            if run.point == .beforeAccepted {
                // Never accepted (never journalled), so never sent.
                #expect(inJournal.isEmpty && atTerminal.isEmpty, "\(where_): \(inJournal) \(atTerminal)")
                continue
            }
            // No lost payment: accepted before the kill, final and visible after the restart, as the terminal decided.
            #expect(inJournal.count == 1, "\(where_): the journal has \(inJournal)")
            guard let payment = inJournal.first, let record = atTerminal.first else {
                Issue.record("\(where_): journal \(inJournal), terminal \(atTerminal)")
                continue
            }
            #expect(payment["phase"] == "final", "\(where_): \(payment)")
            #expect(payment["transactionId"]?.stringValue == record.transactionID, "\(where_): \(payment) \(record)")
            #expect(payment["state"]?.stringValue == record.state, "\(where_): \(payment) \(record)")
            #expect(record.state == (run.declines ? "declined" : "approved"), "\(where_): \(record)")
            #expect(record.amount == Int64(run.amount), "\(where_): \(record)")
        }
        // The terminal has nothing the journal lacks.
        #expect(byID.keys.allSatisfy(journalIDs.contains), "\(context): the terminal has payments the lane lost")
    }
}

/// SplitMix64: a small seeded generator, so that a failing run is replayed from its printed seed.
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
