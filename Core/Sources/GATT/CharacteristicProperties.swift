/// The Characteristic Properties bit field of a characteristic declaration
/// (Core spec Vol 3 Part G 3.3.1.1): what a client may do with the value.
public struct CharacteristicProperties: OptionSet, Hashable, Sendable, CustomStringConvertible {
    /// The bit field as carried in the characteristic declaration.
    public let rawValue: UInt8

    /// The properties whose bits are `rawValue`.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// 0x01: the value may be broadcast in advertising data (BlueZ "broadcast").
    public static let broadcast = CharacteristicProperties(rawValue: 0x01)
    /// 0x02: the value may be read (BlueZ "read").
    public static let read = CharacteristicProperties(rawValue: 0x02)
    /// 0x04: the value may be written without response (BlueZ
    /// "write-without-response").
    public static let writeWithoutResponse = CharacteristicProperties(rawValue: 0x04)
    /// 0x08: the value may be written with response (BlueZ "write").
    public static let write = CharacteristicProperties(rawValue: 0x08)
    /// 0x10: the value may be notified (BlueZ "notify").
    public static let notify = CharacteristicProperties(rawValue: 0x10)
    /// 0x20: the value may be indicated (BlueZ "indicate").
    public static let indicate = CharacteristicProperties(rawValue: 0x20)
    /// 0x40: the value may be written with a signed write command (BlueZ
    /// "authenticated-signed-writes").
    public static let authenticatedSignedWrites = CharacteristicProperties(rawValue: 0x40)
    /// 0x80: a Characteristic Extended Properties descriptor is present (BlueZ
    /// "extended-properties").
    public static let extendedProperties = CharacteristicProperties(rawValue: 0x80)

    static let names: [(CharacteristicProperties, String)] = [
        (.broadcast, "broadcast"), (.read, "read"), (.writeWithoutResponse, "writeWithoutResponse"),
        (.write, "write"), (.notify, "notify"), (.indicate, "indicate"),
        (.authenticatedSignedWrites, "authenticatedSignedWrites"), (.extendedProperties, "extendedProperties"),
    ]

    /// The member names in bit order, e.g. `[read, notify]`.
    public var description: String {
        describeOptions(rawValue: UInt64(rawValue), names: Self.names.map { (UInt64($0.0.rawValue), $0.1) })
    }
}

/// The Characteristic Extended Properties bit field (Core spec Vol 3 Part G
/// 3.3.3.1), carried in descriptor 0x2900.
public struct CharacteristicExtendedProperties: OptionSet, Hashable, Sendable, CustomStringConvertible {
    /// The 16-bit field as carried in the descriptor (little-endian on the wire).
    public let rawValue: UInt16

    /// The extended properties whose bits are `rawValue`.
    public init(rawValue: UInt16) {
        self.rawValue = rawValue
    }

    /// 0x0001: reliable writes are allowed (BlueZ "reliable-write").
    public static let reliableWrite = CharacteristicExtendedProperties(rawValue: 0x0001)
    /// 0x0002: the User Description descriptor is writable (BlueZ
    /// "writable-auxiliaries").
    public static let writableAuxiliaries = CharacteristicExtendedProperties(rawValue: 0x0002)

    static let names: [(CharacteristicExtendedProperties, String)] = [
        (.reliableWrite, "reliableWrite"), (.writableAuxiliaries, "writableAuxiliaries"),
    ]

    /// The member names in bit order; unknown bits in hex.
    public var description: String {
        describeOptions(rawValue: UInt64(rawValue), names: Self.names.map { (UInt64($0.0.rawValue), $0.1) })
    }
}

/// `[name, name, 0x100]`: the named bits in order, then any remaining bits.
func describeOptions(rawValue: UInt64, names: [(UInt64, String)]) -> String {
    var remaining = rawValue
    var parts: [String] = []
    for (bit, name) in names where rawValue & bit == bit {
        parts.append(name)
        remaining &= ~bit
    }
    if remaining != 0 { parts.append("0x" + String(remaining, radix: 16, uppercase: true)) }
    return "[" + parts.joined(separator: ", ") + "]"
}
