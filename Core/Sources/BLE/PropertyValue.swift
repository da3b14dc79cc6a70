/// A D-Bus property value as the BLE layer sees it: a plain Swift value, so
/// the object-tree mirror and the advertisement extraction stay pure. The
/// BlueZ backend maps each D-Bus value onto it (variants unwrapped):
///
/// | D-Bus | PropertyValue |
/// |---|---|
/// | `b` | ``bool(_:)`` |
/// | `n`, `i`, `x` | ``int(_:)`` |
/// | `y`, `q`, `u`, `t` | ``uint(_:)`` |
/// | `d` | ``double(_:)`` |
/// | `s` | ``string(_:)`` |
/// | `o` | ``objectPath(_:)`` |
/// | `ay` | ``bytes(_:)`` |
/// | `as`, `ao` and other arrays | ``array(_:)`` |
/// | `a{..}` (e.g. ManufacturerData `a{qv}`, ServiceData `a{sv}`) | ``dictionary(_:)`` |
///
/// Doubles compare and hash by their bits, as they travel: a NaN equals
/// itself (so a dictionary keyed by NaNs from a peer holds one entry, not one
/// per key, each probing past all the others), and `0.0` differs from `-0.0`.
public enum PropertyValue: Hashable, Sendable {
    /// A Boolean.
    case bool(Bool)
    /// A signed integer (int16, int32, int64).
    case int(Int64)
    /// An unsigned integer (byte, uint16, uint32, uint64).
    case uint(UInt64)
    /// A double.
    case double(Double)
    /// A string.
    case string(String)
    /// An object path.
    case objectPath(String)
    /// A byte array (`ay`).
    case bytes([UInt8])
    /// Any other array.
    case array([PropertyValue])
    /// A dictionary; keys are `uint`, `int` or `string` values.
    case dictionary([PropertyValue: PropertyValue])

    /// The Boolean, if this is one.
    public var boolValue: Bool? {
        if case .bool(let value) = self { value } else { nil }
    }

    /// The value as a signed integer, if it is an integer that fits.
    public var intValue: Int64? {
        switch self {
        case .int(let value): value
        case .uint(let value): Int64(exactly: value)
        default: nil
        }
    }

    /// The string, if this is a string or an object path.
    public var stringValue: String? {
        switch self {
        case .string(let value), .objectPath(let value): value
        default: nil
        }
    }

    /// The bytes, if this is a byte array (or an array of bytes).
    public var bytesValue: [UInt8]? {
        switch self {
        case .bytes(let value): return value
        case .array(let elements):
            var bytes: [UInt8] = []
            for element in elements {
                guard case .uint(let value) = element, let byte = UInt8(exactly: value) else { return nil }
                bytes.append(byte)
            }
            return bytes
        default: return nil
        }
    }

    /// The strings, if this is an array of strings or object paths.
    public var stringsValue: [String]? {
        guard case .array(let elements) = self else { return nil }
        var strings: [String] = []
        for element in elements {
            guard let string = element.stringValue else { return nil }
            strings.append(string)
        }
        return strings
    }

    /// The dictionary, if this is one.
    public var dictionaryValue: [PropertyValue: PropertyValue]? {
        if case .dictionary(let value) = self { value } else { nil }
    }

    /// Equal cases with equal payloads; doubles by their bits.
    public static func == (lhs: PropertyValue, rhs: PropertyValue) -> Bool {
        switch (lhs, rhs) {
        case (.bool(let a), .bool(let b)): a == b
        case (.int(let a), .int(let b)): a == b
        case (.uint(let a), .uint(let b)): a == b
        case (.double(let a), .double(let b)): a.bitPattern == b.bitPattern
        case (.string(let a), .string(let b)), (.objectPath(let a), .objectPath(let b)): a == b
        case (.bytes(let a), .bytes(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.dictionary(let a), .dictionary(let b)): a == b
        default: false
        }
    }

    /// Hashes the case and its payload; doubles by their bits, as ``==`` compares them.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .bool(let value): hasher.combine(0 as UInt8); hasher.combine(value)
        case .int(let value): hasher.combine(1 as UInt8); hasher.combine(value)
        case .uint(let value): hasher.combine(2 as UInt8); hasher.combine(value)
        case .double(let value): hasher.combine(3 as UInt8); hasher.combine(value.bitPattern)
        case .string(let value): hasher.combine(4 as UInt8); hasher.combine(value)
        case .objectPath(let value): hasher.combine(5 as UInt8); hasher.combine(value)
        case .bytes(let value): hasher.combine(6 as UInt8); hasher.combine(value)
        case .array(let value): hasher.combine(7 as UInt8); hasher.combine(value)
        case .dictionary(let value): hasher.combine(8 as UInt8); hasher.combine(value)
        }
    }
}

/// An interface's properties by name (`"Address"`, `"RSSI"`, ...).
public typealias PropertyMap = [String: PropertyValue]
