/// A D-Bus value of any type, as it travels in a message body.
///
/// Containers carry their element types so that empty arrays and dictionaries marshal with the right signature.
/// Byte arrays (`ay`) have a compact case of their own, ``bytes(_:)``, marshalled in one block; decoding always
/// produces it for `ay`, and `.array(.byte, [.byte(...)])` compares equal to the matching `.bytes`.
public enum DBusValue: Sendable, CustomStringConvertible {
    /// `y`
    case byte(UInt8)
    /// `b`
    case boolean(Bool)
    /// `n`
    case int16(Int16)
    /// `q`
    case uint16(UInt16)
    /// `i`
    case int32(Int32)
    /// `u`
    case uint32(UInt32)
    /// `x`
    case int64(Int64)
    /// `t`
    case uint64(UInt64)
    /// `d`
    case double(Double)
    /// `s` (must not contain NUL).
    case string(String)
    /// `o`
    case objectPath(ObjectPath)
    /// `g`
    case signature(DBusSignature)
    /// `h`: a Unix file descriptor (see ``UnixFD`` for ownership).
    case unixFD(UnixFD)
    /// `ay`, in one contiguous block (the fast path for byte arrays).
    case bytes([UInt8])
    /// `a<element>`: an array whose elements all have type `element`.
    case array(DBusType, [DBusValue])
    /// `a{<key><value>}`: ordered entries; keys must have a basic type.
    case dictionary(key: DBusType, value: DBusType, [(key: DBusValue, value: DBusValue)])
    /// `(...)`: a structure of one or more fields.
    case structure([DBusValue])
    /// `v`: a value that carries its own type.
    indirect case variant(DBusValue)

    /// The type of this value.
    public var type: DBusType {
        switch self {
        case .byte: .byte
        case .boolean: .boolean
        case .int16: .int16
        case .uint16: .uint16
        case .int32: .int32
        case .uint32: .uint32
        case .int64: .int64
        case .uint64: .uint64
        case .double: .double
        case .string: .string
        case .objectPath: .objectPath
        case .signature: .signature
        case .unixFD: .unixFD
        case .bytes: .array(.byte)
        case .array(let element, _): .array(element)
        case .dictionary(let key, let value, _): .dictionary(key: key, value: value)
        case .structure(let fields): .structure(fields.map(\.type))
        case .variant: .variant
        }
    }

    /// The signature text of this value's type, e.g. `"a{sv}"`.
    public var signature: String { type.signature }

    /// A readable rendering, close to `busctl`'s.
    public var description: String {
        switch self {
        case .byte(let v): "\(v)"
        case .boolean(let v): "\(v)"
        case .int16(let v): "\(v)"
        case .uint16(let v): "\(v)"
        case .int32(let v): "\(v)"
        case .uint32(let v): "\(v)"
        case .int64(let v): "\(v)"
        case .uint64(let v): "\(v)"
        case .double(let v): "\(v)"
        case .string(let v): "\"\(v)\""
        case .objectPath(let v): v.rawValue
        case .signature(let v): "g\"\(v.rawValue)\""
        case .unixFD(let v): v.description
        case .bytes(let v): "ay[\(v.count) bytes]"
        case .array(_, let elements): "[" + elements.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(_, _, let entries):
            "{" + entries.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case .structure(let fields): "(" + fields.map(\.description).joined(separator: ", ") + ")"
        case .variant(let inner): "<\(inner.signature) \(inner)>"
        }
    }
}

extension DBusValue: Equatable {
    /// Structural equality; `UnixFD`s compare by identity, `.bytes` equals the equivalent `.array(.byte, ...)`,
    /// doubles compare by their bits as they travel (a NaN equals itself, `0.0` differs from `-0.0`).
    public static func == (lhs: DBusValue, rhs: DBusValue) -> Bool {
        switch (lhs, rhs) {
        case (.byte(let a), .byte(let b)): a == b
        case (.boolean(let a), .boolean(let b)): a == b
        case (.int16(let a), .int16(let b)): a == b
        case (.uint16(let a), .uint16(let b)): a == b
        case (.int32(let a), .int32(let b)): a == b
        case (.uint32(let a), .uint32(let b)): a == b
        case (.int64(let a), .int64(let b)): a == b
        case (.uint64(let a), .uint64(let b)): a == b
        case (.double(let a), .double(let b)): a.bitPattern == b.bitPattern
        case (.string(let a), .string(let b)): a == b
        case (.objectPath(let a), .objectPath(let b)): a == b
        case (.signature(let a), .signature(let b)): a == b
        case (.unixFD(let a), .unixFD(let b)): a === b
        case (.bytes(let a), .bytes(let b)): a == b
        case (.bytes(let a), .array(.byte, let b)), (.array(.byte, let b), .bytes(let a)):
            a.count == b.count && zip(a, b).allSatisfy { DBusValue.byte($0) == $1 }
        case (.array(let ta, let a), .array(let tb, let b)): ta == tb && a == b
        case (.dictionary(let ka, let va, let a), .dictionary(let kb, let vb, let b)):
            ka == kb && va == vb && a.count == b.count
                && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case (.structure(let a), .structure(let b)): a == b
        case (.variant(let a), .variant(let b)): a == b
        default: false
        }
    }
}

extension DBusValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral {
    /// A `.string`.
    public init(stringLiteral value: String) { self = .string(value) }
    /// A `.boolean`.
    public init(booleanLiteral value: Bool) { self = .boolean(value) }
}

extension DBusValue {
    /// Wraps any representable Swift value (`DBusValue(UInt16(5))`, `DBusValue(["a": DBusValue("b")])`).
    /// A `DBusValue` passed here is wrapped in a variant: as a Swift type, `DBusValue` stands for `v`.
    public init<T: DBusRepresentable>(_ value: T) { self = value.dbusValue }

    /// Converts to a Swift type, unwrapping variants; throws ``DBusMarshalError/typeMismatch(expected:actual:)``.
    public func decode<T: DBusRepresentable>(_ type: T.Type = T.self) throws(DBusMarshalError) -> T {
        try T(dbusValue: self)
    }

    /// The value inside any number of variant layers.
    public var unwrapped: DBusValue {
        var value = self
        while case .variant(let inner) = value { value = inner }
        return value
    }

    /// The string of a `.string`, `.objectPath` or `.signature` (through variants), else `nil`.
    public var stringValue: String? {
        switch unwrapped {
        case .string(let s): s
        case .objectPath(let p): p.rawValue
        case .signature(let g): g.rawValue
        default: nil
        }
    }

    /// The boolean of a `.boolean` (through variants), else `nil`.
    public var boolValue: Bool? { if case .boolean(let v) = unwrapped { v } else { nil } }

    /// Any integer case (through variants) converted to `Int64` when it fits, else `nil`.
    public var integerValue: Int64? {
        switch unwrapped {
        case .byte(let v): Int64(v)
        case .int16(let v): Int64(v)
        case .uint16(let v): Int64(v)
        case .int32(let v): Int64(v)
        case .uint32(let v): Int64(v)
        case .int64(let v): v
        case .uint64(let v): Int64(exactly: v)
        default: nil
        }
    }

    /// The bytes of an `ay` (either representation, through variants), else `nil`.
    public var bytesValue: [UInt8]? {
        switch unwrapped {
        case .bytes(let b): return b
        case .array(.byte, let elements):
            var out: [UInt8] = []
            out.reserveCapacity(elements.count)
            for case .byte(let b) in elements { out.append(b) }
            return out.count == elements.count ? out : nil
        default: return nil
        }
    }

    /// The elements of an array (through variants; `ay` gives `.byte` elements), else `nil`.
    public var arrayValue: [DBusValue]? {
        switch unwrapped {
        case .array(_, let elements): elements
        case .bytes(let b): b.map(DBusValue.byte)
        default: nil
        }
    }

    /// The entries of a dictionary (through variants), else `nil`.
    public var dictionaryEntries: [(key: DBusValue, value: DBusValue)]? {
        if case .dictionary(_, _, let entries) = unwrapped { entries } else { nil }
    }

    /// The fields of a structure (through variants), else `nil`.
    public var structureFields: [DBusValue]? { if case .structure(let f) = unwrapped { f } else { nil } }

    /// The value stored under string key `key` in a dictionary with string keys (e.g. `a{sv}`); variant values are
    /// returned unwrapped one level.
    public subscript(key: String) -> DBusValue? {
        guard let entries = dictionaryEntries else { return nil }
        for entry in entries where entry.key.stringValue == key {
            if case .variant(let inner) = entry.value { return inner }
            return entry.value
        }
        return nil
    }
}
