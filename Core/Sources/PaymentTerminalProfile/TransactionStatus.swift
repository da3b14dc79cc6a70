/// Where a transaction stands at the terminal.
public enum TransactionState: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The terminal has no transaction with this id: it never received the
    /// request (only as the answer to a Status Query).
    case unknown = 0x00
    /// Received and recorded; the cardholder has not finished.
    case pending = 0x01
    /// Final: charged.
    case approved = 0x02
    /// Final: not charged (the issuer or a rule said no).
    case declined = 0x03
    /// Final: not charged (cancelled on the terminal).
    case cancelled = 0x04
    /// Final: not charged (the terminal could not complete it).
    case failed = 0x05

    /// Whether the state never changes again.
    public var isFinal: Bool {
        switch self {
        case .approved, .declined, .cancelled, .failed: true
        case .unknown, .pending: false
        }
    }

    /// The lowercase name used in JSON (`approved`).
    public var description: String {
        switch self {
        case .unknown: "unknown"
        case .pending: "pending"
        case .approved: "approved"
        case .declined: "declined"
        case .cancelled: "cancelled"
        case .failed: "failed"
        }
    }

    /// The state named `name` (as in ``description``), or nil.
    public init?(name: String) {
        guard let state = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = state
    }
}

/// Why a transaction ended as it did. Open: codes this version does not name
/// round-trip unchanged.
public struct StatusReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code.
    public let rawValue: UInt8

    /// The reason with this code.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// No reason given (approved, pending, unknown).
    public static let none = StatusReason(rawValue: 0x00)
    /// The issuer declined.
    public static let issuerDeclined = StatusReason(rawValue: 0x01)
    /// Above the terminal's amount limit.
    public static let amountLimit = StatusReason(rawValue: 0x02)
    /// The terminal does not accept the currency.
    public static let currencyNotAccepted = StatusReason(rawValue: 0x03)
    /// The reference is blocked by a terminal rule.
    public static let referenceBlocked = StatusReason(rawValue: 0x04)
    /// Cancelled by the cardholder or the operator.
    public static let cancelledByUser = StatusReason(rawValue: 0x05)
    /// The cardholder did not present a card in time.
    public static let timeout = StatusReason(rawValue: 0x06)
    /// The terminal failed (no host link, internal error).
    public static let terminalError = StatusReason(rawValue: 0x07)

    /// A lowercase name (`amountLimit`), or `reason 0xNN` for unnamed codes.
    public var description: String {
        switch self {
        case .none: "none"
        case .issuerDeclined: "issuerDeclined"
        case .amountLimit: "amountLimit"
        case .currencyNotAccepted: "currencyNotAccepted"
        case .referenceBlocked: "referenceBlocked"
        case .cancelledByUser: "cancelledByUser"
        case .timeout: "timeout"
        case .terminalError: "terminalError"
        default: "reason \(rawValue)"
        }
    }
}

/// A Transaction Status value (version 1), indicated by the terminal when a
/// transaction is accepted, when it becomes final, and in answer to a Status
/// Query. Fixed size, 25 bytes, so that one indication carries it whole at
/// an ATT_MTU of 28 or more (``PaymentTerminalProfile/minimumATTMTU``).
///
/// ```
/// offset size field
///  0      1   version (1)
///  1     16   transaction id
/// 17      1   state (TransactionState)
/// 18      1   reason (StatusReason)
/// 19      6   authorisation code: 1 ... 6 ASCII [0-9A-Z], then 0x00 padding;
///             all 0x00 when there is none (only approved carries one)
/// ```
public struct TransactionStatus: Hashable, Sendable {
    /// The exact size.
    public static let size = 25
    /// The authorisation code's field width.
    public static let authorizationCodeWidth = 6

    /// The transaction.
    public var transactionID: TransactionID
    /// Its state.
    public var state: TransactionState
    /// Why, for declined, cancelled and failed.
    public var reason: StatusReason
    /// The issuer's authorisation code, for approved.
    public var authorizationCode: String?

    /// A status without an authorisation code.
    public init(transactionID: TransactionID, state: TransactionState, reason: StatusReason = .none) {
        self.transactionID = transactionID
        self.state = state
        self.reason = reason
        self.authorizationCode = nil
    }

    /// A status; throws if the authorisation code is not 1 to 6 of [0-9A-Z].
    public init(
        transactionID: TransactionID, state: TransactionState, reason: StatusReason, authorizationCode: String?
    ) throws(PaymentTerminalValueError) {
        if let code = authorizationCode, !Self.isValidAuthorizationCode(Array(code.utf8)) {
            throw PaymentTerminalValueError(field: "authorizationCode", "must be 1 to 6 characters of 0-9 and A-Z")
        }
        self.transactionID = transactionID
        self.state = state
        self.reason = reason
        self.authorizationCode = authorizationCode
    }

    /// The wire bytes.
    public func encoded() -> [UInt8] {
        var code = Array((authorizationCode ?? "").utf8)
        code += [UInt8](repeating: 0, count: Self.authorizationCodeWidth - code.count)
        return [PaymentTerminalProfile.formatVersion] + transactionID.bytes + [state.rawValue, reason.rawValue] + code
    }

    /// Decodes a peer's indication.
    public init(decoding bytes: [UInt8]) throws(PaymentTerminalDecodingError) {
        let format = PaymentTerminalFormat.transactionStatus
        guard !bytes.isEmpty else { throw .empty(format: format) }
        var reader = ByteReader(bytes, format: format)
        try reader.version()
        guard bytes.count <= Self.size else { throw .oversized(format: format, size: bytes.count, maximum: Self.size) }
        let id = TransactionID(checked: try reader.take(16, "transaction id"))
        let rawState = try reader.byte("state")
        guard let state = TransactionState(rawValue: rawState) else {
            throw .invalidField(format: format, field: "state", reason: "has the unknown value \(rawState)")
        }
        let reason = StatusReason(rawValue: try reader.byte("reason"))
        let padded = try reader.take(Self.authorizationCodeWidth, "authorisation code")
        try reader.end()
        let code = Array(padded.prefix { $0 != 0 })
        guard padded.dropFirst(code.count).allSatisfy({ $0 == 0 }), code.isEmpty || Self.isValidAuthorizationCode(code)
        else {
            throw .invalidField(format: format, field: "authorisation code", reason: "is not 0-9/A-Z then 0x00 padding")
        }
        transactionID = id
        self.state = state
        self.reason = reason
        authorizationCode = code.isEmpty ? nil : String(decoding: code, as: UTF8.self)
    }

    private static func isValidAuthorizationCode(_ code: [UInt8]) -> Bool {
        (1...authorizationCodeWidth).contains(code.count)
            && code.allSatisfy {
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0)
            }
    }
}
