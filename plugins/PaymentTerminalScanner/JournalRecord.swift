import JSON
import PaymentTerminalProfile

/// One line of the payment journal. The journal is append-only: a payment's
/// life is the sequence of its records.
///
/// On disk each record is one line: eight lowercase hex digits of the
/// CRC-32 (IEEE) of the JSON text, a space, the JSON object, `\n`
/// (docs/profiles/payment-terminal.md, "Payment journal").
public enum JournalRecord: Sendable, Hashable {
    /// pos.pay accepted a payment for `terminal`; synced before any byte is sent.
    case accepted(PaymentRequest, terminal: String, atMilliseconds: Int64)
    /// The terminal acknowledged the Payment Request write (attempt `attempt`, from 1).
    case sent(TransactionID, attempt: Int)
    /// The outcome is not known (link lost, deadline passed, restart); the
    /// payment is being reconciled.
    case reconciling(TransactionID, why: String)
    /// The terminal reported the final status.
    case final(TransactionStatus)

    /// The transaction the record is about.
    public var transactionID: TransactionID {
        switch self {
        case .accepted(let request, _, _): request.transactionID
        case .sent(let id, _), .reconciling(let id, _): id
        case .final(let status): status.transactionID
        }
    }

    /// The record as JSON (version 1).
    public var json: JSON {
        var object: JSONObject = ["v": 1, "tx": .string(transactionID.uuidString)]
        switch self {
        case .accepted(let request, let terminal, let at):
            object["kind"] = "accepted"
            object["amount"] = .int(Int64(request.amount))
            object["currency"] = .string(request.currency.code)
            object["reference"] = .string(request.reference)
            object["terminal"] = .string(terminal)
            object["at"] = .int(at)
        case .sent(_, let attempt):
            object["kind"] = "sent"
            object["attempt"] = .int(Int64(attempt))
        case .reconciling(_, let why):
            object["kind"] = "reconciling"
            object["why"] = .string(why)
        case .final(let status):
            object["kind"] = "final"
            object["state"] = .string(status.state.description)
            object["reason"] = .int(Int64(status.reason.rawValue))
            if let code = status.authorizationCode { object["authCode"] = .string(code) }
        }
        return .object(object)
    }

    /// The line written to disk, `\n` included.
    public var line: [UInt8] {
        let text = Array(json.serialized().utf8)
        return Array(crc32Hex(text).utf8) + [UInt8(ascii: " ")] + text + [UInt8(ascii: "\n")]
    }

    /// Parses one line (without its `\n`); nil if the checksum or the record
    /// is bad.
    public init?(line: ArraySlice<UInt8>) {
        guard line.count > 9, line[line.startIndex + 8] == UInt8(ascii: " ") else { return nil }
        let text = line.dropFirst(9)
        guard String(decoding: line.prefix(8), as: UTF8.self) == crc32Hex(text),
            let json = try? JSON(parsing: text), let record = JournalRecord(json: json)
        else { return nil }
        self = record
    }

    init?(json: JSON) {
        guard json["v"]?.intValue == 1, let text = json["tx"]?.stringValue,
            let id = try? TransactionID(parsing: text), let kind = json["kind"]?.stringValue
        else { return nil }
        switch kind {
        case "accepted":
            guard let amount = json["amount"]?.intValue, amount > 0,
                let currencyText = json["currency"]?.stringValue, let currency = try? CurrencyCode(currencyText),
                let reference = json["reference"]?.stringValue, let terminal = json["terminal"]?.stringValue,
                let at = json["at"]?.intValue,
                let request = try? PaymentRequest(
                    transactionID: id, amount: UInt64(amount), currency: currency, reference: reference)
            else { return nil }
            self = .accepted(request, terminal: terminal, atMilliseconds: at)
        case "sent":
            guard let attempt = json["attempt"]?.intValue, attempt >= 1, attempt <= Int64(Int32.max) else { return nil }
            self = .sent(id, attempt: Int(attempt))
        case "reconciling":
            guard let why = json["why"]?.stringValue else { return nil }
            self = .reconciling(id, why: why)
        case "final":
            guard let name = json["state"]?.stringValue, let state = TransactionState(name: name), state.isFinal,
                let reason = json["reason"]?.intValue, (0...255).contains(reason)
            else { return nil }
            let code = json["authCode"]?.stringValue
            guard
                let status = try? TransactionStatus(
                    transactionID: id, state: state, reason: StatusReason(rawValue: UInt8(reason)),
                    authorizationCode: code)
            else { return nil }
            self = .final(status)
        default:
            return nil
        }
    }
}

/// CRC-32 (IEEE 802.3, reflected, as in zlib) as eight lowercase hex digits.
func crc32Hex(_ bytes: some Collection<UInt8>) -> String {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }
    let text = String(crc ^ 0xFFFF_FFFF, radix: 16)
    return String(repeating: "0", count: 8 - text.count) + text
}
