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
}

/// An interface's properties by name (`"Address"`, `"RSSI"`, ...).
public typealias PropertyMap = [String: PropertyValue]
