import GATT
import PaymentTerminalProfile

/// How many times the terminal charged each transaction: what tests inspect
/// to prove that nothing is charged twice.
public struct ChargeLedger: Sendable, Hashable {
    /// Charges per transaction id (absent: never charged).
    public internal(set) var charges: [TransactionID: Int] = [:]
    /// The sum charged, per currency, in minor units.
    public internal(set) var totals: [CurrencyCode: UInt64] = [:]

    /// An empty ledger.
    public init() {}

    /// The number of charges for `id`.
    public func count(for id: TransactionID) -> Int { charges[id, default: 0] }

    /// The number of charges over all transactions.
    public var totalCharges: Int { charges.values.reduce(0, +) }

    mutating func charge(_ request: PaymentRequest) {
        charges[request.transactionID, default: 0] += 1
        totals[request.currency, default: 0] += request.amount
    }
}

/// The virtual payment terminal's logic, without I/O: the peripheral shell
/// (a role plugin or a blesim device) passes it the bytes centrals write and
/// the current time, and indicates the statuses it returns.
///
/// Idempotency: a transaction id names one request forever. The same request
/// again changes nothing and re-indicates its status; a different request
/// under a known id is refused with ``PaymentTerminalATTError/idempotencyConflict``.
/// A transaction is charged once, when it becomes approved.
///
/// Time is an input (`at:`, any monotonic origin): a transaction accepted at
/// `t` becomes final at `t + config.latency` when the shell next calls in at
/// or after that time (``nextDeadline`` says when).
public struct VirtualTerminal: Sendable {
    struct Entry: Sendable {
        var request: PaymentRequest
        var status: TransactionStatus
        var finalAt: Duration
        var outcome: (TransactionState, StatusReason)
    }

    /// The settings.
    public private(set) var config: VirtualTerminalConfig
    /// What was charged.
    public internal(set) var ledger = ChargeLedger()
    var entries: [TransactionID: Entry] = [:]
    var pendingOrder: [TransactionID] = []
    var approvals = 0

    /// A terminal with no transactions.
    public init(config: VirtualTerminalConfig) {
        self.config = config
    }

    /// The Terminal Info value.
    public var terminalInfoValue: [UInt8] { config.info.encoded() }

    /// The advertisement and scan response to send (the name was checked
    /// against ``PaymentTerminalProfile/maximumLocalNameLength`` with the config).
    public var advertisement: (advertising: AdvertisingData, scanResponse: AdvertisingData) {
        (try? PaymentTerminalProfile.advertisement(localName: config.name))
            ?? (
                AdvertisingData(flags: .leGeneralDiscoverable, serviceUUIDs: [PaymentTerminalProfile.serviceUUID]),
                AdvertisingData()
            )
    }

    /// Every service the terminal publishes: the Payment Terminal Service,
    /// Device Information and Battery.
    public var services: [GATTService] { PaymentTerminalProfile.services(for: config.info) }

    /// The Battery Level value.
    public var batteryLevelValue: [UInt8] { [config.batteryLevel] }

    /// Sets the battery level (clamped to 100); the shell notifies subscribers.
    public mutating func setBatteryLevel(_ level: UInt8) {
        config.batteryLevel = min(level, 100)
    }

    /// When the next pending transaction becomes final, if any is pending.
    public var nextDeadline: Duration? {
        pendingOrder.compactMap { entries[$0]?.finalAt }.min()
    }

    /// The number of transactions the terminal knows.
    public var transactionCount: Int { entries.count }

    /// The status of `id` as of the last call (nil: unknown to the terminal).
    public func status(of id: TransactionID) -> TransactionStatus? { entries[id]?.status }

    /// Handles a Payment Request write. Returns the statuses to indicate, in
    /// order (transactions that became final by `now`, then this one's);
    /// throws the ATT error to answer the write with.
    public mutating func receivePaymentRequest(
        _ bytes: [UInt8], at now: Duration
    ) throws(ATTError)
        -> [TransactionStatus]
    {
        let request: PaymentRequest
        do {
            request = try PaymentRequest(decoding: bytes)
        } catch {
            throw PaymentTerminalATTError.forDecodingError(error)
        }
        return try submit(request, at: now)
    }

    /// Handles a decoded request; see ``receivePaymentRequest(_:at:)``.
    public mutating func submit(_ request: PaymentRequest, at now: Duration) throws(ATTError) -> [TransactionStatus] {
        var indications = advance(to: now)
        if let existing = entries[request.transactionID] {
            guard existing.request == request else { throw PaymentTerminalATTError.idempotencyConflict }
            indications.append(existing.status)
            return indications
        }
        let outcome = decide(request)
        let pending = Self.status(request.transactionID, .pending, .none, nil)
        entries[request.transactionID] = Entry(
            request: request, status: pending, finalAt: now + config.latency, outcome: outcome)
        pendingOrder.append(request.transactionID)
        let settled = advance(to: now)
        indications += settled
        if !settled.contains(where: { $0.transactionID == request.transactionID }) { indications.append(pending) }
        return indications
    }

    /// Handles a Status Query write: the statuses to indicate (those that
    /// became final by `now`, then the one asked about, `unknown` when the
    /// terminal never received that id).
    public mutating func receiveStatusQuery(
        _ bytes: [UInt8], at now: Duration
    ) throws(ATTError)
        -> [TransactionStatus]
    {
        let decoded: StatusQuery
        do {
            decoded = try StatusQuery(decoding: bytes)
        } catch {
            throw PaymentTerminalATTError.forDecodingError(error)
        }
        return query(decoded.transactionID, at: now)
    }

    /// The decoded form of ``receiveStatusQuery(_:at:)``.
    public mutating func query(_ id: TransactionID, at now: Duration) -> [TransactionStatus] {
        var indications = advance(to: now)
        if let entry = entries[id] {
            if !indications.contains(entry.status) { indications.append(entry.status) }
        } else {
            indications.append(Self.status(id, .unknown, .none, nil))
        }
        return indications
    }

    /// Cancels a pending transaction (the cardholder pressed Cancel). Returns
    /// the statuses to indicate; nil if `id` is not pending.
    public mutating func cancel(_ id: TransactionID, at now: Duration) -> [TransactionStatus]? {
        var indications = advance(to: now)
        guard var entry = entries[id], entry.status.state == .pending else { return nil }
        entry.status = Self.status(id, .cancelled, .cancelledByUser, nil)
        entries[id] = entry
        pendingOrder.removeAll { $0 == id }
        indications.append(entry.status)
        return indications
    }

    /// Finalises every transaction whose latency has passed by `now`, charging
    /// the approved ones; returns their final statuses to indicate.
    public mutating func advance(to now: Duration) -> [TransactionStatus] {
        var settled: [TransactionStatus] = []
        for id in pendingOrder {
            guard var entry = entries[id], entry.finalAt <= now else { continue }
            var code: String?
            if entry.outcome.0 == .approved {
                approvals += 1
                code = Self.authorizationCode(approvals)
                ledger.charge(entry.request)
            }
            entry.status = Self.status(id, entry.outcome.0, entry.outcome.1, code)
            entries[id] = entry
            settled.append(entry.status)
        }
        let finalIDs = Set(settled.map(\.transactionID))
        pendingOrder.removeAll { finalIDs.contains($0) }
        return settled
    }

    private func decide(_ request: PaymentRequest) -> (TransactionState, StatusReason) {
        for rule in config.rules where rule.matches(request) { return (rule.outcome, rule.reason) }
        return (.approved, .none)
    }

    private static func authorizationCode(_ serial: Int) -> String {
        let digits: String = String(serial % 100_000)
        let padding: String = String(repeating: "0", count: max(0, 5 - digits.count))
        return "A\(padding)\(digits)"
    }

    private static func status(
        _ id: TransactionID, _ state: TransactionState, _ reason: StatusReason, _ code: String?
    ) -> TransactionStatus {
        // Codes built here are always 1-6 of [0-9A-Z]; without one the status cannot be invalid.
        (try? TransactionStatus(transactionID: id, state: state, reason: reason, authorizationCode: code))
            ?? TransactionStatus(transactionID: id, state: state, reason: reason)
    }
}
