import GATT
import PaymentTerminalProfile

/// What to do with a payment after a terminal answered a Status Query (or
/// indicated its status) for it.
public enum ReconciliationStep: Sendable, Hashable {
    /// Final at the terminal: append this record; the payment is settled.
    case settle(JournalRecord)
    /// The terminal never received it: write the same request again, with
    /// the same transaction id (attempt `attempt`), then journal `.sent`.
    case resend(PaymentRequest, attempt: Int)
    /// Pending at the terminal: wait for its final indication, query again later.
    case wait
    /// The answer is not about this payment at its terminal; change nothing.
    case ignore
}

/// What to do after the terminal answered a payment's Payment Request write
/// with an ATT error.
public enum WriteErrorStep: Sendable, Hashable {
    /// A refusal: the terminal did not record the request; append this
    /// record (final, failed): nothing was charged.
    case settle(JournalRecord)
    /// Busy (0x83): the terminal did not take the request now; write the
    /// same request, same id, again after a pause, within the deadline.
    case retryLater
    /// Whether the terminal has the request is unknown: reconcile it.
    case reconcile
    /// The payment is unknown or already final; change nothing.
    case ignore
}

/// The reconciliation rules, pure. They hold two promises:
///
/// - nothing is charged twice: a payment only ever goes to the terminal it
///   was accepted for, always under its one transaction id, and it is
///   resent only when that terminal says it never received the id (the
///   terminal's idempotency covers any race past that);
/// - every accepted payment ends final: each unsettled payment is queried
///   whenever its terminal is reachable, until the terminal reports it final.
public enum ReconciliationPlanner {
    /// The payments to query when connected to `terminal`: every unsettled
    /// payment accepted for it, oldest first. Accepted and sent alike: a
    /// crash between the journal sync and the write, or between the write
    /// and its `.sent` record, leaves it unknown whether the terminal has it.
    public static func queries(in state: JournalState, terminal: String) -> [TransactionID] {
        state.unsettled.filter { $0.terminal == terminal }.map(\.transactionID)
    }

    /// Records to append after a restart or a lost link, making every
    /// unsettled payment visibly "unknown, reconciling" (those already
    /// reconciling are left as they are).
    public static func markUnknown(in state: JournalState, terminal: String? = nil, why: String) -> [JournalRecord] {
        state.unsettled.filter { $0.phase != .reconciling && (terminal == nil || $0.terminal == terminal) }
            .map { .reconciling($0.transactionID, why: why) }
    }

    /// How an ATT error answering the Payment Request write of `id` moves
    /// it. The profile's refusals (0x80 unsupported version, 0x81 malformed,
    /// 0x82 idempotency conflict) mean the terminal did not record this
    /// request, so nothing was charged: settle it as failed
    /// (``StatusReason/terminalError``). 0x83 busy means it did not take it
    /// now: write the same request again later, within the deadline. Any
    /// other error (a transport failure, a timeout) leaves it unknown:
    /// reconcile it.
    public static func step(for id: TransactionID, in state: JournalState, writeError: ATTError) -> WriteErrorStep {
        guard let entry = state.payments[id], entry.phase != .final else { return .ignore }
        let refusals = [
            PaymentTerminalATTError.unsupportedVersion, PaymentTerminalATTError.malformedValue,
            PaymentTerminalATTError.idempotencyConflict,
        ]
        if writeError == PaymentTerminalATTError.busy { return .retryLater }
        guard refusals.contains(writeError) else { return .reconcile }
        return .settle(.final(TransactionStatus(transactionID: id, state: .failed, reason: .terminalError)))
    }

    /// How `status`, received from `terminal`, moves the payment `id`.
    public static func step(
        for id: TransactionID, in state: JournalState, answer status: TransactionStatus, from terminal: String
    ) -> ReconciliationStep {
        guard let entry = state.payments[id], entry.phase != .final, entry.terminal == terminal,
            status.transactionID == id
        else { return .ignore }
        switch status.state {
        case .approved, .declined, .cancelled, .failed: return .settle(.final(status))
        case .unknown: return .resend(entry.request, attempt: entry.sendAttempts + 1)
        case .pending: return .wait
        }
    }
}
