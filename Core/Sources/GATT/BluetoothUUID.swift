/// A Bluetooth UUID: a 16-bit, 32-bit or 128-bit attribute or service type.
///
/// The value is always held in canonical 128-bit form, so equality and hashing
/// do not depend on how it was written: `BluetoothUUID(uuid16: 0x180D)`,
/// `BluetoothUUID(uuid32: 0x0000_180D)` and the BlueZ string
/// `"0000180d-0000-1000-8000-00805f9b34fb"` are the same value. A 16- or 32-bit
/// UUID is an abbreviation of a 128-bit UUID in the Bluetooth Base UUID
/// (`xxxxxxxx-0000-1000-8000-00805f9b34fb`, Core spec Vol 3 Part B 2.5.1).
///
/// Text: ``uuidString`` is the canonical lowercase 128-bit form BlueZ reports;
/// ``shortString`` is the shortest form; ``description`` adds the SIG name when
/// one is known. Bytes: AD structures and ATT PDUs carry UUIDs little-endian in
/// 2, 4 or 16 bytes (``littleEndianBytes``, ``init(littleEndianBytes:)``).
public struct BluetoothUUID: Hashable, Comparable, Sendable {
    /// The most significant 64 bits of the 128-bit value (the first 16 hex
    /// digits of ``uuidString``).
    public let high: UInt64
    /// The least significant 64 bits of the 128-bit value.
    public let low: UInt64

    /// The Bluetooth Base UUID, `00000000-0000-1000-8000-00805f9b34fb`: every
    /// 16- and 32-bit UUID is an offset into it.
    public static let base = BluetoothUUID(high: 0x0000_0000_0000_1000, low: 0x8000_0080_5F9B_34FB)

    /// The UUID whose 128 bits are `high` followed by `low`.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The SIG-assigned 16-bit UUID `value` (e.g. `0x180D`, Heart Rate).
    public init(uuid16 value: UInt16) {
        self.init(uuid32: UInt32(value))
    }

    /// The 32-bit UUID `value` in the Bluetooth Base UUID.
    public init(uuid32 value: UInt32) {
        self.init(high: UInt64(value) << 32 | Self.base.high, low: Self.base.low)
    }

    /// The UUID whose 16 bytes are given most significant first, in the order
    /// they are written in ``uuidString``.
    ///
    /// - Throws: ``BluetoothUUID/ByteLengthError`` unless there are 16 bytes.
    public init(bigEndianBytes bytes: [UInt8]) throws(BluetoothUUID.ByteLengthError) {
        guard bytes.count == 16 else { throw ByteLengthError(count: bytes.count, allowed: [16]) }
        self.init(littleEndian128: bytes.reversed())
    }

    /// The UUID encoded little-endian in 2, 4 or 16 bytes, as in AD structures
    /// and ATT PDUs.
    ///
    /// - Throws: ``BluetoothUUID/ByteLengthError`` for any other length.
    public init(littleEndianBytes bytes: [UInt8]) throws(BluetoothUUID.ByteLengthError) {
        switch bytes.count {
        case 2: self.init(uuid16: UInt16(littleEndianBytes: bytes, at: 0))
        case 4: self.init(uuid32: UInt32(littleEndianBytes: bytes, at: 0))
        case 16: self.init(littleEndian128: bytes)
        default: throw ByteLengthError(count: bytes.count, allowed: [2, 4, 16])
        }
    }

    private init(littleEndian128 bytes: [UInt8]) {
        self.init(high: UInt64(littleEndianBytes: bytes, at: 8), low: UInt64(littleEndianBytes: bytes, at: 0))
    }

    /// Whether the UUID lies in the Bluetooth Base UUID, i.e. has a 32-bit
    /// (and perhaps a 16-bit) short form.
    public var isInBluetoothBase: Bool {
        low == Self.base.low && high & 0xFFFF_FFFF == Self.base.high
    }

    /// The 16-bit short form, or nil when the UUID has none.
    public var uuid16: UInt16? {
        guard let value = uuid32, value <= UInt32(UInt16.max) else { return nil }
        return UInt16(value)
    }

    /// The 32-bit short form (also present for every 16-bit UUID), or nil when
    /// the UUID is not in the Bluetooth Base UUID.
    public var uuid32: UInt32? {
        isInBluetoothBase ? UInt32(high >> 32) : nil
    }

    /// The shortest width the UUID can be written in.
    public var shortestWidth: Width {
        if uuid16 != nil { return .bits16 }
        if uuid32 != nil { return .bits32 }
        return .bits128
    }

    /// The 16 bytes, most significant first.
    public var bigEndianBytes: [UInt8] {
        high.bigEndianBytes + low.bigEndianBytes
    }

    /// The shortest little-endian encoding (2, 4 or 16 bytes), as used in AD
    /// structures and ATT PDUs.
    public var littleEndianBytes: [UInt8] {
        switch shortestWidth {
        case .bits16: return UInt16(truncatingIfNeeded: high >> 32).littleEndianBytes
        case .bits32: return UInt32(truncatingIfNeeded: high >> 32).littleEndianBytes
        case .bits128: return low.littleEndianBytes + high.littleEndianBytes
        }
    }

    /// The little-endian encoding at `width`, or nil when the UUID does not
    /// fit in it (see ``fits(in:)``).
    public func littleEndianBytes(width: Width) -> [UInt8]? {
        switch width {
        case .bits16: return uuid16?.littleEndianBytes
        case .bits32: return uuid32?.littleEndianBytes
        case .bits128: return low.littleEndianBytes + high.littleEndianBytes
        }
    }

    /// Whether the UUID can be written at `width`.
    public func fits(in width: Width) -> Bool {
        width.byteCount >= shortestWidth.byteCount
    }

    /// Orders by the 128-bit value.
    public static func < (lhs: BluetoothUUID, rhs: BluetoothUUID) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }
}

extension BluetoothUUID {
    /// The three sizes a UUID is carried in.
    public enum Width: Int, CaseIterable, Hashable, Sendable {
        /// A 16-bit SIG-assigned UUID (2 bytes on the wire).
        case bits16 = 16
        /// A 32-bit UUID (4 bytes on the wire).
        case bits32 = 32
        /// A full 128-bit UUID (16 bytes on the wire).
        case bits128 = 128

        /// Bytes taken on the wire.
        public var byteCount: Int { rawValue / 8 }
    }

    /// A UUID was given as bytes of a length that is not a UUID width.
    public struct ByteLengthError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The number of bytes given.
        public let count: Int
        /// The byte counts that would have been accepted.
        public let allowed: [Int]

        /// `count` bytes given where `allowed` counts are accepted.
        public init(count: Int, allowed: [Int]) {
            self.count = count
            self.allowed = allowed
        }

        /// Names the given and the accepted lengths.
        public var description: String {
            let accepted = allowed.map(String.init).joined(separator: ", ")
            return "a Bluetooth UUID takes \(accepted) bytes, not \(count)"
        }
    }
}

extension BluetoothUUID: CustomStringConvertible, CustomDebugStringConvertible {
    /// The canonical lowercase 128-bit form, as BlueZ reports UUIDs:
    /// `0000180d-0000-1000-8000-00805f9b34fb`.
    public var uuidString: String {
        String(unsafeUninitializedCapacity: 36) { text in
            var offset = 0
            for shift in stride(from: 124, through: 0, by: -4) {
                if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                    text[offset] = UInt8(ascii: "-")
                    offset += 1
                }
                let nibble = Int(truncatingIfNeeded: (shift >= 64 ? high >> (shift - 64) : low >> shift) & 0xF)
                text[offset] = nibble < 10 ? UInt8(ascii: "0") + UInt8(nibble) : UInt8(ascii: "a") + UInt8(nibble - 10)
                offset += 1
            }
            return 36
        }
    }

    /// The shortest lowercase form, accepted back by ``init(_:)``: `180d` for a
    /// 16-bit UUID, `12345678` for a 32-bit one, else ``uuidString``.
    public var shortString: String {
        switch shortestWidth {
        case .bits16, .bits32: return hexString(littleEndianBytes.reversed())
        case .bits128: return uuidString
        }
    }

    /// ``shortString``, preceded by the SIG name when known:
    /// `Heart Rate (180d)`, `fe2c`, `6e400001-b5a3-f393-e0a9-e50e24dcca9e`.
    public var description: String {
        guard let name else { return shortString }
        return "\(name) (\(shortString))"
    }

    /// The canonical 128-bit form with the name, for debugging output.
    public var debugDescription: String {
        guard let name else { return "BluetoothUUID(\(uuidString))" }
        return "BluetoothUUID(\(uuidString) \(name))"
    }
}
