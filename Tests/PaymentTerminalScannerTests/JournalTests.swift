import BLETesting
import PaymentTerminalProfile
import PaymentTerminalScanner
import Testing

@Suite struct JournalTests {
    func sampleRecords(_ generator: inout SplitMix) -> [JournalRecord] {
        let first = request(1250, "ORD-1", using: &generator)
        let second = request(99, "ORD-2 ✓", using: &generator)
        return [
            .accepted(first, terminal: "T1", atMilliseconds: 1_700_000_000_000),
            .sent(first.transactionID, attempt: 1),
            .final(TransactionStatus(transactionID: first.transactionID, state: .declined, reason: .amountLimit)),
            .accepted(second, terminal: "T1", atMilliseconds: 1_700_000_000_500),
            .reconciling(second.transactionID, why: "link lost"),
        ]
    }

    @Test func recordsRoundTripThroughTheFile() async throws {
        var generator = SplitMix(seed: 11)
        let path = TemporaryDirectory("pos-journal").path + "/journal"
        let records = sampleRecords(&generator)
        let (journal, contents) = try await PaymentJournal.open(path: path)
        #expect(contents.records.isEmpty)
        for record in records { try await journal.append(record) }
        let read = try PaymentJournal.read(path: path)
        #expect(read.records == records && read.tornBytes == 0)
        let state = JournalState(replaying: read.records)
        #expect(state.entries.map(\.phase) == [.final, .reconciling])
        #expect(state.unsettled.map(\.transactionID) == [records[3].transactionID])
    }

    @Test func aTornLastRecordIsIgnoredAtEveryCutPointAndNothingEarlierIsLost() async throws {
        var generator = SplitMix(seed: 12)
        let records = sampleRecords(&generator)
        let directory = TemporaryDirectory("pos-journal").path
        let whole = records.flatMap(\.line)
        let lastLength = records.last!.line.count
        for cut in 1..<lastLength {
            let path = "\(directory)/journal-\(cut)"
            appendRaw(whole, to: path)
            truncateFile(path, to: whole.count - lastLength + cut)
            let read = try PaymentJournal.read(path: path)
            #expect(read.records == Array(records.dropLast()), "cut at \(cut)")
            #expect(read.tornBytes == cut)
            let (journal, reopened) = try await PaymentJournal.open(path: path)
            #expect(reopened.records == Array(records.dropLast()))
            #expect(fileSize(path) == whole.count - lastLength)
            try await journal.append(records.last!)
            #expect(try PaymentJournal.read(path: path).records == records)
        }
    }

    @Test func aDamagedRecordBeforeGoodOnesIsCorruptionNotATornTail() throws {
        var generator = SplitMix(seed: 13)
        let records = sampleRecords(&generator)
        var bytes = records.flatMap(\.line)
        let secondLine = records[0].line.count + 12
        bytes[secondLine] ^= 0x01
        let path = TemporaryDirectory("pos-journal").path + "/journal"
        appendRaw(bytes, to: path)
        #expect(throws: JournalError.corruptRecord(path: path, line: 2)) { try PaymentJournal.read(path: path) }
        // A damaged complete last line (a torn write on power loss) is still a tail.
        var tail = records.flatMap(\.line)
        tail[tail.count - 5] ^= 0x01
        let tailPath = TemporaryDirectory("pos-journal").path + "/journal"
        appendRaw(tail, to: tailPath)
        #expect(try PaymentJournal.read(path: tailPath).records == Array(records.dropLast()))
    }

    @Test func compactionKeepsEveryPaymentsState() async throws {
        var generator = SplitMix(seed: 14)
        let records = sampleRecords(&generator)
        let path = TemporaryDirectory("pos-journal").path + "/journal"
        let (journal, _) = try await PaymentJournal.open(path: path)
        for record in records { try await journal.append(record) }
        try await journal.append(.sent(records[3].transactionID, attempt: 1))
        let before = JournalState(replaying: try PaymentJournal.read(path: path).records)
        try await journal.compact(to: before)
        let after = JournalState(replaying: try PaymentJournal.read(path: path).records)
        #expect(after.entries == before.entries)
        try await journal.append(.final(TransactionStatus(transactionID: records[3].transactionID, state: .cancelled)))
        #expect(JournalState(replaying: try PaymentJournal.read(path: path).records).unsettled.isEmpty)
    }

    @Test func replayNeverMovesAFinalPayment() {
        var generator = SplitMix(seed: 15)
        let paid = request(5, "", using: &generator)
        let approved = try? TransactionStatus(
            transactionID: paid.transactionID, state: .approved, reason: .none, authorizationCode: "A1")
        let state = JournalState(replaying: [
            .accepted(paid, terminal: "T", atMilliseconds: 0), .final(approved!),
            .reconciling(paid.transactionID, why: "late"),
            .final(TransactionStatus(transactionID: paid.transactionID, state: .failed)),
            .sent(request(6, "", using: &generator).transactionID, attempt: 1),
        ])
        #expect(state.payments[paid.transactionID]?.finalStatus == approved)
        #expect(state.ignoredRecords == 3)
    }
}
