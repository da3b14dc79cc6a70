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

    private static let fields: Set<String> = ["amountAbove", "currency", "reference", "outcome", "reason"]
    private static let namedReasons: [StatusReason] = [
        .none, .issuerDeclined, .amountLimit, .currencyNotAccepted, .referenceBlocked, .cancelledByUser, .timeout,
        .terminalError,
    ]

    /// Reads a rule object; errors name fields under `path` (`rules[0]`).
    init(json: JSON, path: String) throws(VirtualTerminalConfigError) {
        guard let object = json.objectValue else { throw VirtualTerminalConfigError(path: path, "expected an object") }
        for key in object.keys where !Self.fields.contains(key) {
            throw VirtualTerminalConfigError(path: "\(path).\(key)", "unknown field")
        }
        if let value = object["amountAbove"] {
            guard let amount = value.intValue, amount >= 0 else {
                throw VirtualTerminalConfigError(path: "\(path).amountAbove", "expected a non-negative integer")
            }
            amountAbove = UInt64(amount)
        }
        if let value = object["currency"] {
            guard let text = value.stringValue, let code = try? CurrencyCode(text) else {
                throw VirtualTerminalConfigError(
                    path: "\(path).currency", "expected three uppercase letters (ISO 4217)")
            }
            currency = code
        }
        if let value = object["reference"] {
            guard let text = value.stringValue else {
                throw VirtualTerminalConfigError(path: "\(path).reference", "expected a glob pattern string")
            }
            referencePattern = text
        }
        guard amountAbove != nil || currency != nil || referencePattern != nil else {
            throw VirtualTerminalConfigError(path: path, "needs at least one of amountAbove, currency, reference")
        }
        guard let text = object["outcome"]?.stringValue, let state = TransactionState(name: text), state.isFinal else {
            throw VirtualTerminalConfigError(
                path: "\(path).outcome", "expected one of approved, declined, cancelled, failed")
        }
        outcome = state
        reason = Self.defaultReason(for: state)
        if let value = object["reason"] {
            guard let text = value.stringValue, let named = Self.namedReasons.first(where: { $0.description == text })
            else {
                throw VirtualTerminalConfigError(path: "\(path).reason", "expected a reason name such as amountLimit")
            }
            reason = named
        }
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
