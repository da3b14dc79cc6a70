// Little-endian integer helpers shared by the wire codecs (AD structures, ATT
// values). Internal: the public API speaks in typed values and `[UInt8]`.

extension FixedWidthInteger {
    /// The integer's bytes, least significant first (Bluetooth's byte order).
    var littleEndianBytes: [UInt8] {
        (0..<(Self.bitWidth / 8)).map { UInt8(truncatingIfNeeded: self >> ($0 * 8)) }
    }

    /// Reads `Self.bitWidth / 8` bytes, least significant first, starting at
    /// `start`. The caller guarantees the bytes are there.
    init<C: Collection>(littleEndianBytes bytes: C, at start: C.Index) where C.Element == UInt8 {
        var value: Self = 0
        var index = start
        for shift in stride(from: 0, to: Self.bitWidth, by: 8) {
            value |= Self(truncatingIfNeeded: bytes[index]) << shift
            index = bytes.index(after: index)
        }
        self = value
    }
}

/// Two lowercase hexadecimal digits per byte, no separators.
func hexString(_ bytes: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef")
    var text = ""
    for byte in bytes {
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 0x0F)])
    }
    return text
}

/// `0x`-prefixed, two uppercase hexadecimal digits: the way the Core spec
/// writes octet codes ("0x0A").
func hexByte(_ byte: UInt8) -> String {
    let digits = Array("0123456789ABCDEF")
    return "0x" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0x0F)])
}

extension FixedWidthInteger {
    /// The integer's bytes, most significant first.
    var bigEndianBytes: [UInt8] {
        littleEndianBytes.reversed()
    }
}
