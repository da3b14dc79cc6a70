import JSON
import PaymentTerminalProfile
import RoleKit

/// The scanner's control methods (docs/profiles/payment-terminal.md,
/// "Control methods"): parameter validation and result shapes, pure.
public enum PosMethod: String, Sendable, CaseIterable {
    /// Pay: `{amount, currency, reference?}`.
    case pay = "pos.pay"
    /// List the journal: `{phase?, limit?}`.
    case transactions = "pos.transactions"
    /// List the terminal table: no params.
    case terminals = "pos.terminals"
    /// Pin a terminal: `{terminal}`.
    case select = "pos.select"
    /// Drop the terminal: no params.
    case release = "pos.release"

    /// The params the method declares; the agent checks every call against
    /// them before the handler runs, and the param types below read them
    /// through the same schema.
    public var params: ParamSchema {
        switch self {
        case .pay:
            .object(
                .required("amount", .integer(1...Int64(PaymentRequest.maximumAmount))),
                .required(
                    "currency",
                    .custom("an ISO 4217 code of three uppercase letters (\"EUR\")") { value in
                        value.stringValue.map { (try? CurrencyCode($0)) != nil } ?? false
                    }),
                .optional("reference", .string(maxBytes: PaymentRequest.maximumReferenceLength, allowEmpty: true)))
        case .transactions:
            .object(
                .optional("phase", .oneOf(PaymentPhase.allCases.map(\.rawValue))),
                .optional("limit", .integer(1...1000)))
        case .terminals, .release: .none
        case .select: .object(.required("terminal", .string(maxBytes: 256)))
        }
    }

    /// `params` as this method's schema accepts them, or -32602 naming each problem.
    public func arguments(_ params: JSON?) throws(PluginMethodError) -> ParamValues {
        do {
            return try self.params.validate(params)
        } catch {
            throw .invalidParams(error)
        }
    }
}

/// The scanner's JSON-RPC error codes (outside the reserved range).
public enum PosError {
    /// 1001: no terminal is selected (none near enough, or released).
    public static func noTerminal() -> PluginMethodError {
        PluginMethodError(code: 1001, "no payment terminal is selected")
    }
    /// 1002: pos.select named a terminal the scanner has not seen.
    public static func unknownTerminal(_ id: String) -> PluginMethodError {
        PluginMethodError(code: 1002, "no terminal \"\(id)\" in the table", data: ["terminal": .string(id)])
    }
    /// 1003: the terminal went away or the deadline passed: the payment is
    /// "unknown, reconciling" and will end final; `data` names it.
    public static func paymentUnknown(_ id: TransactionID, why: String) -> PluginMethodError {
        PluginMethodError(
            code: 1003, "payment outcome unknown (\(why)); it is being reconciled",
            data: ["transactionId": .string(id.uuidString), "phase": "reconciling"])
    }
    /// 1004: the terminal refused the request with an ATT error (conflict, busy).
    public static func terminalRefused(_ id: TransactionID, code: UInt8) -> PluginMethodError {
        PluginMethodError(
            code: 1004, "the terminal refused the request (ATT error \(code))",
            data: ["transactionId": .string(id.uuidString), "attError": .int(Int64(code))])
    }
    /// 1005: the journal could not be written; nothing was sent.
    public static func journalUnavailable(_ why: String) -> PluginMethodError {
        PluginMethodError(code: 1005, "the payment journal cannot be written: \(why); nothing was sent")
    }
    /// 1006: the fleet's outbox refused the payment's record (the back office
    /// has been unreachable for long); the payment was settled failed, nothing was sent.
    public static func backOfficeUnavailable(_ id: TransactionID, why: String) -> PluginMethodError {
        PluginMethodError(
            code: 1006, "the back office cannot be told of the payment (\(why)); it was not sent",
            data: ["transactionId": .string(id.uuidString)])
    }
}

/// pos.pay's params.
public struct PosPayParams: Sendable, Hashable {
    /// Minor units, 1 ... 2^53 - 1.
    public var amount: UInt64
    /// ISO 4217 alphabetic.
    public var currency: CurrencyCode
    /// At most 64 bytes of UTF-8; empty when absent.
    public var reference: String

    /// Validates `params` (``PosMethod/pay``'s schema); every error is -32602 naming the parameter.
    public init(params: JSON?) throws(PluginMethodError) {
        let arguments = try PosMethod.pay.arguments(params)
        guard let amount = arguments.int("amount"), let text = arguments.string("currency"),
            let currency = try? CurrencyCode(text)
        else { throw .invalidParams("amount and currency are required") }
        self.amount = amount.magnitude
        self.currency = currency
        self.reference = arguments.string("reference") ?? ""
    }

    /// The request under `id`.
    public func request(id: TransactionID) -> PaymentRequest? {
        try? PaymentRequest(transactionID: id, amount: amount, currency: currency, reference: reference)
    }
}

/// pos.transactions' params.
public struct PosTransactionsParams: Sendable, Hashable {
    /// Only payments in this phase.
    public var phase: PaymentPhase?
    /// At most this many, newest first (1 ... 1000, default 100).
    public var limit: Int

    /// Validates `params` (``PosMethod/transactions``'s schema).
    public init(params: JSON?) throws(PluginMethodError) {
        let arguments = try PosMethod.transactions.arguments(params)
        phase = arguments.string("phase").flatMap(PaymentPhase.init(rawValue:))
        limit = Int(arguments.int("limit") ?? 100)
    }

    /// The matching payments of `state`, newest first, as the result array.
    public func result(_ state: JournalState) -> JSON {
        let matching = state.entries.reversed().filter { phase == nil || $0.phase == phase }
        return ["transactions": .array(matching.prefix(limit).map(posPaymentJSON))]
    }
}

/// pos.select's params.
public struct PosSelectParams: Sendable, Hashable {
    /// The terminal's id (as pos.terminals lists it).
    public var terminal: String

    /// Validates `params` (``PosMethod/select``'s schema).
    public init(params: JSON?) throws(PluginMethodError) {
        terminal = try PosMethod.select.arguments(params).string("terminal") ?? ""
    }
}

/// Checks that pos.terminals / pos.release got no params (absent, `{}` or `[]`).
public func posValidateNoParams(_ params: JSON?) throws(PluginMethodError) {
    _ = try PosMethod.terminals.arguments(params)
}

/// A payment as pos.pay and pos.transactions return it.
public func posPaymentJSON(_ entry: PaymentEntry) -> JSON {
    var object: JSONObject = [
        "transactionId": .string(entry.transactionID.uuidString), "amount": .int(Int64(entry.request.amount)),
        "currency": .string(entry.request.currency.code), "reference": .string(entry.request.reference),
        "terminal": .string(entry.terminal), "phase": .string(entry.phase.rawValue),
        "acceptedAt": .int(entry.acceptedAtMilliseconds),
    ]
    if let status = entry.finalStatus {
        object["state"] = .string(status.state.description)
        if status.reason != .none { object["reason"] = .string(status.reason.description) }
        if let code = status.authorizationCode { object["authCode"] = .string(code) }
    }
    if let why = entry.reconcilingReason { object["reconciling"] = .string(why) }
    return .object(object)
}

/// pos.terminals' result.
public func posTerminalsJSON(_ table: TerminalTable) -> JSON {
    let terminals: [JSON] = table.terminals.map { entry in
        var object: JSONObject = [
            "id": .string(entry.id), "rssi": entry.rssiKnown ? .int(Int64(entry.smoothedRSSI.rounded())) : .null,
            "selected": .bool(entry.id == table.selected),
        ]
        object["name"] = entry.name.map(JSON.string) ?? .null
        object["battery"] = entry.batteryLevel.map { .int(Int64($0)) } ?? .null
        object["terminalId"] = entry.info.map { .string($0.terminalID) } ?? .null
        return .object(object)
    }
    return ["terminals": .array(terminals), "selected": table.selected.map(JSON.string) ?? .null]
}
