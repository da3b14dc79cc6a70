import JSON
import PaymentTerminalProfile

/// One approve/decline rule: when every condition given holds, the
/// transaction ends in `outcome`. Rules are tried in order; the first match
/// wins; when none matches the terminal approves.
public struct TerminalRule: Sendable, Hashable {
    /// Matches amounts strictly above this (minor units).
    public var amountAbove: UInt64?
    /// Matches this currency.
    public var currency: CurrencyCode?
    /// Matches references against this glob (`*` any run, `?` one character).
    public var referencePattern: String?
    /// The final state: approved, declined, cancelled or failed.
    public var outcome: TransactionState
    /// The reason sent with it.
    public var reason: StatusReason

    /// A rule; give at least one condition.
    public init(
        amountAbove: UInt64? = nil, currency: CurrencyCode? = nil, referencePattern: String? = nil,
        outcome: TransactionState, reason: StatusReason
    ) {
        self.amountAbove = amountAbove
        self.currency = currency
        self.referencePattern = referencePattern
        self.outcome = outcome
        self.reason = reason
    }

    /// Whether the rule applies to `request`.
    public func matches(_ request: PaymentRequest) -> Bool {
        if let amountAbove, request.amount <= amountAbove { return false }
        if let currency, request.currency != currency { return false }
        if let referencePattern, !globMatches(referencePattern, request.reference) { return false }
        return true
    }

    private static let namedReasons: [StatusReason] = [
        .none, .issuerDeclined, .amountLimit, .currencyNotAccepted, .referenceBlocked, .cancelledByUser, .timeout,
        .terminalError,
    ]

    /// Reads a rule object (`rules[0]`); nil when it is wrong (every problem
    /// is in the reader's report).
    init?(reading reader: JSONFieldReader) {
        reader.allowOnly(["amountAbove", "currency", "reference", "outcome", "reason"])
        amountAbove = reader.integer("amountAbove", in: 0...Int64.max).map(UInt64.init)
        currency = reader.read("currency", "three uppercase letters (ISO 4217)") { value in
            value.stringValue.flatMap { try? CurrencyCode($0) }
        }
        referencePattern = reader.read("reference", "a glob pattern string") { $0.stringValue }
        let conditions = ["amountAbove", "currency", "reference"].filter { reader.object[$0] != nil }
        if conditions.isEmpty { reader.issue(nil, "needs at least one of amountAbove, currency, reference") }
        let outcome = reader.read("outcome", required: true, "one of approved, declined, cancelled, failed") {
            value in value.stringValue.flatMap(TransactionState.init(name:)).flatMap { $0.isFinal ? $0 : nil }
        }
        let named = reader.read("reason", "a reason name such as amountLimit") { value in
            value.stringValue.flatMap { text in Self.namedReasons.first { $0.description == text } }
        }
        guard let outcome, !conditions.isEmpty, reader.object["reason"] == nil || named != nil else { return nil }
        self.outcome = outcome
        reason = named ?? Self.defaultReason(for: outcome)
    }

    private static func defaultReason(for outcome: TransactionState) -> StatusReason {
        switch outcome {
        case .declined: .issuerDeclined
        case .cancelled: .cancelledByUser
        case .failed: .terminalError
        default: .none
        }
    }
}

/// Whether `text` matches `pattern`, where `*` matches any run of
/// characters and `?` exactly one; every other character matches itself.
func globMatches(_ pattern: String, _ text: String) -> Bool {
    let pattern: [Character] = Array(pattern)
    let text: [Character] = Array(text)
    let anyOne: Character = "?"
    let anyRun: Character = "*"
    var p = 0
    var t = 0
    var star: Int? = nil
    var resume = 0
    while t < text.count {
        if p < pattern.count && (pattern[p] == anyOne || pattern[p] == text[t]) {
            p += 1
            t += 1
        } else if p < pattern.count && pattern[p] == anyRun {
            star = p
            resume = t
            p += 1
        } else if let star {
            p = star + 1
            resume += 1
            t = resume
        } else {
            return false
        }
    }
    while p < pattern.count && pattern[p] == anyRun { p += 1 }
    return p == pattern.count
}
