// Little-endian helpers for the plugin's binary formats.

extension FixedWidthInteger {
    /// The integer's bytes, least significant first.
    var littleEndianBytes: [UInt8] {
        (0..<(Self.bitWidth / 8)).map { UInt8(truncatingIfNeeded: self >> ($0 * 8)) }
    }

    /// Reads `Self.bitWidth / 8` bytes at `offset`, least significant first;
    /// the caller has checked they are there.
    init(littleEndian bytes: [UInt8], at offset: Int) {
        var value: Self = 0
        for index in 0..<(Self.bitWidth / 8) {
            value |= Self(truncatingIfNeeded: bytes[offset + index]) << (index * 8)
        }
        self = value
    }
}

extension Float {
    /// The IEEE 754 binary32 bytes, least significant first.
    var littleEndianBytes: [UInt8] { bitPattern.littleEndianBytes }

    /// Reads four bytes at `offset`.
    init(littleEndian bytes: [UInt8], at offset: Int) {
        self.init(bitPattern: UInt32(littleEndian: bytes, at: offset))
    }
}
