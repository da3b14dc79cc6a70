/// A payment's transaction id: 16 opaque bytes chosen by the point of sale,
/// which the terminal treats as an idempotency key. Its text form is the
/// RFC 4122 layout of the bytes in wire order (`00112233-4455-6677-8899-aabbccddeeff`
/// for the bytes 0x00, 0x11, ... 0xff).
public struct TransactionID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The 16 bytes, in wire order.
    public let bytes: [UInt8]

    /// The id with these 16 bytes.
    public init(bytes: [UInt8]) throws(PaymentTerminalValueError) {
        guard bytes.count == 16 else {
            throw PaymentTerminalValueError(field: "transactionId", "must be 16 bytes, not \(bytes.count)")
        }
        self.bytes = bytes
    }

    /// Parses the text form (32 hex digits, with or without the four dashes
    /// at their usual places; either case).
    public init(parsing text: String) throws(PaymentTerminalValueError) {
        let dashesAt: Set<Int> = [8, 13, 18, 23]
        var digits: [UInt8] = []
        for (offset, character) in text.utf8.enumerated() {
            if character == UInt8(ascii: "-") && text.utf8.count == 36 && dashesAt.contains(offset) { continue }
            guard let value = Self.hexValue(character) else {
                throw PaymentTerminalValueError(field: "transactionId", "is not a UUID (\"\(text)\")")
            }
            digits.append(value)
        }
        guard digits.count == 32, text.utf8.count == 32 || text.utf8.count == 36 else {
            throw PaymentTerminalValueError(field: "transactionId", "is not a UUID (\"\(text)\")")
        }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: 32, by: 2) { bytes.append(digits[index] << 4 | digits[index + 1]) }
        self.bytes = bytes
    }

    /// A random (version 4) id from `generator`.
    public static func random(using generator: inout some RandomNumberGenerator) -> TransactionID {
        var bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        return TransactionID(checked: bytes)
    }

    /// A random (version 4) id from the system generator.
    public static func random() -> TransactionID {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    init(checked bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The lowercase text form with dashes.
    public var uuidString: String {
        let digits = Array("0123456789abcdef")
        var text = ""
        for (index, byte) in bytes.enumerated() {
            if [4, 6, 8, 10].contains(index) { text.append("-") }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return text
    }

    /// ``uuidString``.
    public var description: String { uuidString }

    /// Orders by bytes.
    public static func < (lhs: TransactionID, rhs: TransactionID) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }

    private static func hexValue(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// An ISO 4217 alphabetic currency code: three uppercase ASCII letters
/// (`EUR`, `USD`). Amounts are in the currency's minor units.
public struct CurrencyCode: Hashable, Sendable, CustomStringConvertible {
    /// The three letters.
    public let code: String

    /// The code `text`, which must be three uppercase ASCII letters.
    public init(_ text: String) throws(PaymentTerminalValueError) {
        let letters = Array(text.utf8)
        guard letters.count == 3, letters.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else {
            throw PaymentTerminalValueError(
                field: "currency", "must be three uppercase letters (ISO 4217), not \"\(text)\"")
        }
        code = text
    }

    /// The three ASCII bytes sent on the wire.
    public var bytes: [UInt8] { Array(code.utf8) }

    /// The code.
    public var description: String { code }
}
