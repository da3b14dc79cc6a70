import BLETesting
import PaymentTerminalProfile
import PaymentTerminalScanner
import Testing
import VirtualPaymentTerminal

/// The lane process was killed: it stops at once, leaving the journal as it is.
struct Crash: Error {}

/// A lane (the scanner's payment path) driven step by step against a virtual
/// terminal, with a crash possible before any step and links that drop. The
/// terminal is another device: it survives the lane's crashes.
struct LaneWorld {
    var generator: SplitMix
    var terminal: VirtualTerminal
    let terminalName = "T1"
    let path: String
    var now: Duration = .zero
    /// Steps left before the crash (nil: no crash in this life).
    var crashAfter: Int?
    /// Chance that a link drop loses one BLE exchange.
    var dropChance: Double
    var accepted: [TransactionID] = []

    /// Counts a step; throws when the crash comes. A crash during a journal
    /// append leaves a torn prefix of that record.
    mutating func step(tearing record: JournalRecord? = nil) throws {
        guard let left = crashAfter else { return }
        if left == 0 {
            if let record, Bool.random(using: &generator) {
                let line = record.line
                appendRaw(Array(line.prefix(Int.random(in: 1..<line.count, using: &generator))), to: path)
            }
            throw Crash()
        }
        crashAfter = left - 1
    }

    mutating func linkDrops() -> Bool { Double.random(in: 0..<1, using: &generator) < dropChance }

    mutating func append(_ record: JournalRecord, to journal: PaymentJournal) async throws {
        try step(tearing: record)
        try await journal.append(record)
    }

    /// pos.pay: journal, write, record, wait, record; the link may drop at
    /// the write (before or after the terminal got it) or at the indication.
    mutating func pay(_ request: PaymentRequest, journal: PaymentJournal) async throws {
        try await append(.accepted(request, terminal: terminalName, atMilliseconds: 0), to: journal)
        accepted.append(request.transactionID)
        try step()  // between the journal sync and the write
        if linkDrops() {
            try await append(.reconciling(request.transactionID, why: "link lost during the write"), to: journal)
            return
        }
        let indications = try terminal.submit(request, at: now)
        try step()  // the terminal has it; the write response is on its way
        if linkDrops() {
            try await append(
                .reconciling(request.transactionID, why: "link lost before the write response"), to: journal)
            return
        }
        try await append(.sent(request.transactionID, attempt: 1), to: journal)
        var final = indications.last { $0.transactionID == request.transactionID && $0.state.isFinal }
        if final == nil {
            if let deadline = terminal.nextDeadline { now = max(now, deadline) }
            final = terminal.advance(to: now).last { $0.transactionID == request.transactionID }
            try step()  // the terminal charged; the indication is on its way
        }
        guard let final, !linkDrops() else {
            try await append(.reconciling(request.transactionID, why: "link lost waiting for the status"), to: journal)
            return
        }
        try await append(.final(final), to: journal)
    }

    /// After a restart: reopen the journal, mark the unsettled payments
    /// unknown, and query the terminal until each is final.
    mutating func recover() async throws {
        let (journal, contents) = try await PaymentJournal.open(path: path)
        var state = JournalState(replaying: contents.records)
        for record in ReconciliationPlanner.markUnknown(in: state, why: "restart") {
            try await append(record, to: journal)
            state.apply(record)
        }
        var rounds = 0
        while !state.unsettled.isEmpty {
            rounds += 1
            guard rounds < 10_000 else { return }
            for id in ReconciliationPlanner.queries(in: state, terminal: terminalName) {
                try step()
                if linkDrops() { continue }
                guard let answer = terminal.query(id, at: now).last(where: { $0.transactionID == id }) else { continue }
                switch ReconciliationPlanner.step(for: id, in: state, answer: answer, from: terminalName) {
                case .settle(let record):
                    try await append(record, to: journal)
                    state.apply(record)
                case .resend(let request, let attempt):
                    #expect(request.transactionID == id)
                    if linkDrops() { continue }
                    _ = try terminal.submit(request, at: now)
                    try step()
                    if linkDrops() { continue }
                    let record = JournalRecord.sent(id, attempt: attempt)
                    try await append(record, to: journal)
                    state.apply(record)
                case .wait:
                    if let deadline = terminal.nextDeadline { now = max(now, deadline) }
                case .ignore:
                    Issue.record("an answer about \(id) from its own terminal was ignored")
                }
            }
            now += .milliseconds(100)
        }
    }
}

@Suite struct CrashReconciliationTests {
    /// The pure core of the SIGKILL test: for many seeds, payments with a
    /// crash at a random step (journal torn mid-append included) and links
    /// that drop; after each crash the lane restarts and reconciles (and may
    /// crash again). Exactly one charge per approved payment, none for the
    /// others, every accepted payment final in the journal and in agreement
    /// with the terminal.
    @Test(arguments: 0..<300)
    func everyAcceptedPaymentEndsFinalAndNothingIsChargedTwice(seed: Int) async throws {
        var generator = SplitMix(seed: UInt64(seed) &* 7919 &+ 1)
        let config = try VirtualTerminalConfig(json: [
            "latencyMs": .int(Int64.random(in: 0...2000, using: &generator)),
            "rules": [["amountAbove": 5000, "outcome": "declined"], ["reference": "*7", "outcome": "failed"]],
        ])
        var world = LaneWorld(
            generator: generator, terminal: VirtualTerminal(config: config),
            path: TemporaryDirectory("pos-journal").path + "/journal", dropChance: Double(seed % 4) * 0.1)
        let payments = (0..<Int.random(in: 1...5, using: &world.generator)).map { index in
            request(
                UInt64.random(in: 1...9000, using: &world.generator), "ORD-\(seed)-\(index)", using: &world.generator)
        }
        world.crashAfter = Int.random(in: 0...(payments.count * 8), using: &world.generator)
        var lives = 0
        var next = 0
        while true {
            lives += 1
            #expect(lives < 50)
            if lives >= 50 { return }
            do {
                if lives > 1 || next > 0 { try await world.recover() }
                let (journal, _) = try await PaymentJournal.open(path: world.path)
                while next < payments.count {
                    try await world.pay(payments[next], journal: journal)
                    next += 1
                }
                try await world.recover()
                break
            } catch is Crash {
                // The caller of an interrupted pos.pay retries it as a new payment only if it was
                // never accepted; an accepted one is the journal's to finish.
                let state = JournalState(replaying: try PaymentJournal.read(path: world.path).records)
                if next < payments.count, state.payments[payments[next].transactionID] != nil { next += 1 }
                world.crashAfter =
                    Bool.random(using: &world.generator) ? nil : Int.random(in: 0...6, using: &world.generator)
            }
        }
        let state = JournalState(replaying: try PaymentJournal.read(path: world.path).records)
        #expect(state.unsettled.isEmpty)
        for entry in state.entries {
            let final = entry.finalStatus
            #expect(final?.state.isFinal == true)
            #expect(world.terminal.status(of: entry.transactionID) == final)
            #expect(world.terminal.ledger.count(for: entry.transactionID) == (final?.state == .approved ? 1 : 0))
        }
        // Nothing charged that the journal does not hold.
        #expect(world.terminal.transactionCount <= state.entries.count)
        #expect(world.terminal.ledger.totalCharges == state.entries.filter { $0.finalStatus?.state == .approved }.count)
    }
}
