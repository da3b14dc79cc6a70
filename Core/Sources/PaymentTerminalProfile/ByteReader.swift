// A cursor over a peer's bytes. Every read checks the length first and throws
// a typed error; nothing here can trap on short or odd input.

struct ByteReader {
    let bytes: [UInt8]
    let format: PaymentTerminalFormat
    private(set) var offset = 0

    init(_ bytes: [UInt8], format: PaymentTerminalFormat) {
        self.bytes = bytes
        self.format = format
    }

    var remaining: Int { bytes.count - offset }

    mutating func byte(_ field: String) throws(PaymentTerminalDecodingError) -> UInt8 {
        try take(1, field)[0]
    }

    mutating func take(_ count: Int, _ field: String) throws(PaymentTerminalDecodingError) -> [UInt8] {
        guard count >= 0, remaining >= count else {
            throw .truncated(format: format, field: field, needed: offset + count, got: bytes.count)
        }
        let slice = Array(bytes[offset..<(offset + count)])
        offset += count
        return slice
    }

    mutating func uint16(_ field: String) throws(PaymentTerminalDecodingError) -> UInt16 {
        let raw = try take(2, field)
        return UInt16(raw[0]) | UInt16(raw[1]) << 8
    }

    mutating func uint64(_ field: String) throws(PaymentTerminalDecodingError) -> UInt64 {
        let raw = try take(8, field)
        var value: UInt64 = 0
        for (index, byte) in raw.enumerated() { value |= UInt64(byte) << (8 * UInt64(index)) }
        return value
    }

    /// Reads the version byte and checks it is one this code understands.
    mutating func version() throws(PaymentTerminalDecodingError) {
        let version = try byte("version")
        guard version == PaymentTerminalProfile.formatVersion else {
            throw .unsupportedVersion(format: format, version: version)
        }
    }

    /// A length byte then that many bytes of UTF-8, at most `maximum` bytes.
    mutating func string(_ field: String, maximum: Int) throws(PaymentTerminalDecodingError) -> String {
        let length = Int(try byte("\(field) length"))
        guard length <= maximum else {
            throw .fieldTooLong(format: format, field: field, length: length, maximum: maximum)
        }
        let raw = try take(length, field)
        guard let text = String(validating: raw, as: UTF8.self) else {
            throw .invalidField(format: format, field: field, reason: "is not valid UTF-8")
        }
        return text
    }

    /// Throws unless every byte was consumed.
    func end() throws(PaymentTerminalDecodingError) {
        guard remaining == 0 else { throw .trailingBytes(format: format, count: remaining) }
    }
}

extension UInt16 {
    var littleEndianPair: [UInt8] { [UInt8(truncatingIfNeeded: self), UInt8(truncatingIfNeeded: self >> 8)] }
}

extension UInt64 {
    var littleEndianOctets: [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: self >> (8 * UInt64($0))) } }
}

/// A length byte and the UTF-8 bytes of `text` (the caller checked its size).
func lengthPrefixed(_ text: String) -> [UInt8] {
    let utf8 = Array(text.utf8)
    return [UInt8(truncatingIfNeeded: utf8.count)] + utf8
}
