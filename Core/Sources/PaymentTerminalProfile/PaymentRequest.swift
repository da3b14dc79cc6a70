/// A Payment Request write (version 1): what the point of sale asks the
/// terminal to charge.
///
/// ```
/// offset size field
///  0      1   version (1)
///  1     16   transaction id
/// 17      8   amount, minor units, unsigned little-endian, 1 ... 2^53 - 1
/// 25      3   currency, ISO 4217 alphabetic, ASCII A-Z
/// 28      1   reference length R, 0 ... 64
/// 29      R   reference, UTF-8
/// ```
/// 29 to 93 bytes: longer than a minimum-MTU write (20 bytes), so centrals
/// send it as a long write (prepared writes, executed at once).
public struct PaymentRequest: Hashable, Sendable {
    /// The largest amount, 2^53 - 1: exact as a JSON number everywhere.
    public static let maximumAmount: UInt64 = (1 << 53) - 1
    /// The longest reference, in UTF-8 bytes.
    public static let maximumReferenceLength = 64
    /// Size with an empty reference.
    public static let minimumSize = 29
    /// Size with the longest reference.
    public static let maximumSize = minimumSize + maximumReferenceLength

    /// The idempotency key.
    public var transactionID: TransactionID
    /// The amount in the currency's minor units (cents for EUR).
    public var amount: UInt64
    /// The currency.
    public var currency: CurrencyCode
    /// The merchant's reference (an order number), shown on the terminal.
    public var reference: String

    /// A request; throws if the amount or reference is out of range.
    public init(
        transactionID: TransactionID, amount: UInt64, currency: CurrencyCode, reference: String
    ) throws(PaymentTerminalValueError) {
        guard amount >= 1, amount <= Self.maximumAmount else {
            throw PaymentTerminalValueError(field: "amount", "must be from 1 to \(Self.maximumAmount) minor units")
        }
        guard reference.utf8.count <= Self.maximumReferenceLength else {
            throw PaymentTerminalValueError(
                field: "reference", "must be at most \(Self.maximumReferenceLength) bytes of UTF-8")
        }
        self.transactionID = transactionID
        self.amount = amount
        self.currency = currency
        self.reference = reference
    }

    /// The wire bytes.
    public func encoded() -> [UInt8] {
        [PaymentTerminalProfile.formatVersion] + transactionID.bytes + amount.littleEndianOctets + currency.bytes
            + lengthPrefixed(reference)
    }

    /// Decodes a peer's write.
    public init(decoding bytes: [UInt8]) throws(PaymentTerminalDecodingError) {
        let format = PaymentTerminalFormat.paymentRequest
        guard !bytes.isEmpty else { throw .empty(format: format) }
        var reader = ByteReader(bytes, format: format)
        try reader.version()
        guard bytes.count <= Self.maximumSize else {
            throw .oversized(format: format, size: bytes.count, maximum: Self.maximumSize)
        }
        let id = TransactionID(checked: try reader.take(16, "transaction id"))
        let amount = try reader.uint64("amount")
        guard amount >= 1, amount <= Self.maximumAmount else {
            throw .invalidField(format: format, field: "amount", reason: "is \(amount), outside 1 ... 2^53 - 1")
        }
        let currencyBytes = try reader.take(3, "currency")
        guard let currency = try? CurrencyCode(String(decoding: currencyBytes, as: UTF8.self)) else {
            throw .invalidField(format: format, field: "currency", reason: "is not three ASCII letters A-Z")
        }
        let reference = try reader.string("reference", maximum: Self.maximumReferenceLength)
        try reader.end()
        self.transactionID = id
        self.amount = amount
        self.currency = currency
        self.reference = reference
    }
}

/// A Status Query write (version 1): "indicate the status of this
/// transaction". 17 bytes: version (1), then the transaction id.
public struct StatusQuery: Hashable, Sendable {
    /// The exact size.
    public static let size = 17

    /// The transaction asked about.
    public var transactionID: TransactionID

    /// A query for `transactionID`.
    public init(transactionID: TransactionID) {
        self.transactionID = transactionID
    }

    /// The wire bytes.
    public func encoded() -> [UInt8] { [PaymentTerminalProfile.formatVersion] + transactionID.bytes }

    /// Decodes a peer's write.
    public init(decoding bytes: [UInt8]) throws(PaymentTerminalDecodingError) {
        let format = PaymentTerminalFormat.statusQuery
        guard !bytes.isEmpty else { throw .empty(format: format) }
        var reader = ByteReader(bytes, format: format)
        try reader.version()
        transactionID = TransactionID(checked: try reader.take(16, "transaction id"))
        try reader.end()
    }
}
