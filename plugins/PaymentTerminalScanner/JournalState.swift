import PaymentTerminalProfile

/// Where a payment stands in the journal.
public enum PaymentPhase: String, Sendable, Hashable, CaseIterable {
    /// Recorded; the request may or may not have reached the terminal.
    case accepted
    /// The terminal acknowledged the request; no final status yet.
    case sent
    /// Unknown, being reconciled (link lost, deadline passed, restart).
    case reconciling
    /// The terminal reported a final status.
    case final
}

/// One payment as rebuilt from the journal.
public struct PaymentEntry: Sendable, Hashable {
    /// The request, with its transaction id (reused for every retry).
    public var request: PaymentRequest
    /// The terminal it belongs to: it is only ever sent to this one.
    public var terminal: String
    /// When pos.pay accepted it (wall clock, ms since the epoch).
    public var acceptedAtMilliseconds: Int64
    /// Its phase.
    public var phase: PaymentPhase
    /// The final status, once final.
    public var finalStatus: TransactionStatus?
    /// Acknowledged sends so far.
    public var sendAttempts: Int
    /// Why it is reconciling, when it is.
    public var reconcilingReason: String?

    /// The transaction id.
    public var transactionID: TransactionID { request.transactionID }
}

/// Every payment's state, rebuilt by replaying journal records in order.
/// Replay is idempotent per record and never moves a final payment.
public struct JournalState: Sendable, Hashable {
    /// Payments by id.
    public private(set) var payments: [TransactionID: PaymentEntry] = [:]
    /// Ids in acceptance order.
    public private(set) var order: [TransactionID] = []
    /// Records that named a transaction never accepted, or contradicted a
    /// final one (kept for diagnosis; they change nothing).
    public private(set) var ignoredRecords = 0

    /// An empty state.
    public init() {}

    /// The state after `records`.
    public init(replaying records: [JournalRecord]) {
        for record in records { apply(record) }
    }

    /// Payments in acceptance order.
    public var entries: [PaymentEntry] { order.compactMap { payments[$0] } }

    /// Payments that are not final, in acceptance order.
    public var unsettled: [PaymentEntry] { entries.filter { $0.phase != .final } }

    /// Applies one record.
    public mutating func apply(_ record: JournalRecord) {
        let id = record.transactionID
        if case .accepted(let request, let terminal, let at) = record {
            guard payments[id] == nil else {
                ignoredRecords += 1
                return
            }
            payments[id] = PaymentEntry(
                request: request, terminal: terminal, acceptedAtMilliseconds: at, phase: .accepted, finalStatus: nil,
                sendAttempts: 0, reconcilingReason: nil)
            order.append(id)
            return
        }
        guard var entry = payments[id], entry.phase != .final else {
            ignoredRecords += 1
            return
        }
        switch record {
        case .accepted: return
        case .sent(_, let attempt):
            entry.sendAttempts = max(entry.sendAttempts, attempt)
            if entry.phase == .accepted { entry.phase = .sent }
        case .reconciling(_, let why):
            entry.phase = .reconciling
            entry.reconcilingReason = why
        case .final(let status):
            entry.phase = .final
            entry.finalStatus = status
            entry.reconcilingReason = nil
        }
        payments[id] = entry
    }

    /// Forgets a payment whose acceptance could not be journalled: it was
    /// never sent, and a replay of the journal would not know it either.
    /// Only an accepted payment without sends is withdrawn.
    public mutating func withdraw(_ id: TransactionID) {
        guard let entry = payments[id], entry.phase == .accepted, entry.sendAttempts == 0 else { return }
        payments[id] = nil
        order.removeAll { $0 == id }
    }

    /// Records that rebuild exactly this state (for compaction): each
    /// payment's acceptance, then its sends and its current phase.
    public var compactedRecords: [JournalRecord] {
        entries.flatMap { entry -> [JournalRecord] in
            var records: [JournalRecord] = [
                .accepted(entry.request, terminal: entry.terminal, atMilliseconds: entry.acceptedAtMilliseconds)
            ]
            if entry.sendAttempts > 0 { records.append(.sent(entry.transactionID, attempt: entry.sendAttempts)) }
            switch entry.phase {
            case .accepted, .sent: break
            case .reconciling:
                records.append(.reconciling(entry.transactionID, why: entry.reconcilingReason ?? "reconciling"))
            case .final:
                if let status = entry.finalStatus { records.append(.final(status)) }
            }
            return records
        }
    }
}
