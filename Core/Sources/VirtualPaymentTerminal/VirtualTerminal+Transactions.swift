import PaymentTerminalProfile

/// One transaction as the virtual terminal knows it: its request, its
/// current status and how many times it was charged. What blesim's control
/// interface reports, so that tests observe the terminal side of a payment
/// rather than the lane's journal.
public struct TerminalTransaction: Sendable, Hashable {
    /// The request, with its transaction id.
    public var request: PaymentRequest
    /// The current status (pending until the latency has passed).
    public var status: TransactionStatus
    /// Charges for this id: 0, or 1 once approved (idempotency keeps it there).
    public var charges: Int

    /// The transaction id.
    public var transactionID: TransactionID { request.transactionID }
}

extension VirtualTerminal {
    /// Every transaction the terminal has recorded, by transaction id (as
    /// of the last call that advanced it).
    public var transactions: [TerminalTransaction] {
        entries.keys.sorted().compactMap { id in
            entries[id].map {
                TerminalTransaction(request: $0.request, status: $0.status, charges: ledger.count(for: id))
            }
        }
    }
}
