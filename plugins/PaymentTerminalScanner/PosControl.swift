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

    /// Validates `params`; every error is -32602 naming the parameter.
    public init(params: JSON?) throws(PluginMethodError) {
        let object = try posObject(params, allowed: ["amount", "currency", "reference"])
        guard let amount = object["amount"]?.intValue, amount >= 1, UInt64(amount) <= PaymentRequest.maximumAmount
        else {
            throw .invalidParams("amount: expected an integer from 1 to \(PaymentRequest.maximumAmount) (minor units)")
        }
        guard let text = object["currency"]?.stringValue, let currency = try? CurrencyCode(text) else {
            throw .invalidParams("currency: expected an ISO 4217 code of three uppercase letters (\"EUR\")")
        }
        var reference = ""
        if let value = object["reference"] {
            guard let text = value.stringValue, text.utf8.count <= PaymentRequest.maximumReferenceLength else {
                throw .invalidParams("reference: expected a string of at most 64 bytes of UTF-8")
            }
            reference = text
        }
        self.amount = amount.magnitude
        self.currency = currency
        self.reference = reference
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

    /// Validates `params`.
    public init(params: JSON?) throws(PluginMethodError) {
        let object = try posObject(params, allowed: ["phase", "limit"])
        phase = nil
        if let value = object["phase"] {
            guard let text = value.stringValue, let phase = PaymentPhase(rawValue: text) else {
                throw .invalidParams("phase: expected accepted, sent, reconciling or final")
            }
            self.phase = phase
        }
        limit = 100
        if let value = object["limit"] {
            guard let number = value.intValue, (1...1000).contains(number) else {
                throw .invalidParams("limit: expected an integer from 1 to 1000")
            }
            limit = Int(number)
        }
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

    /// Validates `params`.
    public init(params: JSON?) throws(PluginMethodError) {
        let object = try posObject(params, allowed: ["terminal"])
        guard let terminal = object["terminal"]?.stringValue, !terminal.isEmpty else {
            throw .invalidParams("terminal: expected a terminal id from pos.terminals")
        }
        self.terminal = terminal
    }
}

/// Checks that pos.terminals / pos.release got no params (absent, null or `{}`).
public func posValidateNoParams(_ params: JSON?) throws(PluginMethodError) {
    _ = try posObject(params, allowed: [])
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

private func posObject(_ params: JSON?, allowed: Set<String>) throws(PluginMethodError) -> JSONObject {
    guard let params, !params.isNull else { return JSONObject() }
    guard let object = params.objectValue else { throw .invalidParams("params: expected an object") }
    for key in object.keys where !allowed.contains(key) { throw .invalidParams("\(key): unknown parameter") }
    return object
}
