/// A Swift type with a fixed D-Bus type that converts to and from ``DBusValue``.
///
/// Conversions from `DBusValue` unwrap variants, so a `v` argument holding a string decodes as `String`. They throw
/// ``DBusMarshalError/typeMismatch(expected:actual:)`` for any other shape: peer input never crashes.
/// `[UInt8]` maps to `ay` in one block, `[String: DBusValue]` to `a{sv}`, `[DBusValue]` to `av`.
public protocol DBusRepresentable: Sendable {
    /// The D-Bus type of every value of this Swift type.
    static var dbusType: DBusType { get }
    /// This value as a D-Bus value.
    var dbusValue: DBusValue { get }
    /// Converts from a D-Bus value (variants are unwrapped).
    init(dbusValue: DBusValue) throws(DBusMarshalError)
}

/// A representable type whose D-Bus type is basic, usable as a dictionary key.
public protocol DBusBasicRepresentable: DBusRepresentable, Hashable {}

extension DBusRepresentable {
    static func mismatch(_ value: DBusValue) -> DBusMarshalError {
        .typeMismatch(expected: dbusType.signature, actual: value.signature)
    }
}

extension UInt8: DBusBasicRepresentable {
    /// `y`
    public static var dbusType: DBusType { .byte }
    /// `.byte(self)`
    public var dbusValue: DBusValue { .byte(self) }
    /// From `.byte`.
    public init(dbusValue: DBusValue) throws(DBusMarshalError) {
        guard case .byte(let v) = dbusValue.unwrapped else { throw UInt8.mismatch(dbusValue) }
        self = v
    }
}

extension Bool: DBusBasicRepresentable {
    /// `b`
    public static var dbusType: DBusType { .boolean }
    /// `.boolean(self)`
    public var dbusValue: DBusValue { .boolean(self) }
    /// From `.boolean`.
    public init(dbusValue: DBusValue) throws(DBusMarshalError) {
        guard case .boolean(let v) = dbusValue.unwrapped else { throw Bool.mismatch(dbusValue) }
        self = v
    }
}

extension Int16: DBusBasicRepresentable {
    /// `n`
    public static var dbusType: DBusType { .int16 }
    /// `.int16(self)`
    public var dbusValue: DBusValue { .int16(self) }
    /// From `.int16`.
    public init(dbusValue: DBusValue) throws(DBusMarshalError) {
        guard case .int16(let v) = dbusValue.unwrapped else { throw Int16.mismatch(dbusValue) }
        self = v
    }
}

extension UInt16: DBusBasicRepresentable {
    /// `q`
    public static var dbusType: DBusType { .uint16 }
    /// `.uint16(self)`
    public var dbusValue: DBusValue { .uint16(self) }
    /// From `.uint16`.
    public init(dbusValue: DBusValue) throws(DBusMarshalError) {
        guard case .uint16(let v) = dbusValue.unwrapped else { throw UInt16.mismatch(dbusValue) }
        self = v
    }
}

extension Int32: DBusBasicRepresentable {
    /// `i`
    public static var dbusType: DBusType { .int32 }
    /// `.int32(self)`
    public var dbusValue: DBusValue { .int32(self) }
    /// From `.int32`.
    public init(dbusValue: DBusValue) throws(DBusMarshalError) {
        guard case .int32(let v) = dbusValue.unwrapped else { throw Int32.mismatch(dbusValue) }
        self = v
    }
}

extension UInt32: DBusBasicRepresentable {
    /// `u`
    public static var dbusType: DBusType { .uint32 }
    /// `.uint32(self)`
    public var dbusValue: DBusValue { .uint32(self) }
    /// From `.uint32`.
    public init(dbusValue: DBusValue) throws(DBusMarshalError) {
        guard case .uint32(let v) = dbusValue.unwrapped else { throw UInt32.mismatch(dbusValue) }
        self = v
    }
}

extension Int64: DBusBasicRepresentable {
    /// `x`
    public static var dbusType: DBusType { .int64 }
    /// `.int64(self)`
    public var dbusValue: DBusValue { .int64(self) }
    /// From `.int64`.
    public init(dbusValue: DBusValue) throws(DBusMarshalError) {
        guard case .int64(let v) = dbusValue.unwrapped else { throw Int64.mismatch(dbusValue) }
        self = v
    }
}

extension UInt64: DBusBasicRepresentable {
    /// `t`
    public static var dbusType: DBusType { .uint64 }
    /// `.uint64(self)`
    public var dbusValue: DBusValue { .uint64(self) }
    /// From `.uint64`.
    public init(dbusValue: DBusValue) throws(DBusMarshalError) {
        guard case .uint64(let v) = dbusValue.unwrapped else { throw UInt64.mismatch(dbusValue) }
        self = v
    }
}

extension Double: DBusBasicRepresentable {
    /// `d`
    public static var dbusType: DBusType { .double }
    /// `.double(self)`
    public var dbusValue: DBusValue { .double(self) }
    /// From `.double`.
    public init(dbusValue: DBusValue) throws(DBusMarshalError) {
        guard case .double(let v) = dbusValue.unwrapped else { throw Double.mismatch(dbusValue) }
        self = v
    }
}

extension String: DBusBasicRepresentable {
    /// `s`
    public static var dbusType: DBusType { .string }
    /// `.string(self)`
    public var dbusValue: DBusValue { .string(self) }
    /// From `.string` only (use ``DBusValue/stringValue`` to also accept paths and signatures).
    public init(dbusValue: DBusValue) throws(DBusMarshalError) {
        guard case .string(let v) = dbusValue.unwrapped else { throw String.mismatch(dbusValue) }
        self = v
    }
}

extension ObjectPath: DBusBasicRepresentable {
    /// `o`
    public static var dbusType: DBusType { .objectPath }
    /// `.objectPath(self)`
    public var dbusValue: DBusValue { .objectPath(self) }
    /// From `.objectPath`.
    public init(dbusValue: DBusValue) throws(DBusMarshalError) {
        guard case .objectPath(let v) = dbusValue.unwrapped else { throw ObjectPath.mismatch(dbusValue) }
        self = v
    }
}

extension DBusSignature: DBusBasicRepresentable {
    /// `g`
    public static var dbusType: DBusType { .signature }
    /// `.signature(self)`
    public var dbusValue: DBusValue { .signature(self) }
    /// From `.signature`.
    public init(dbusValue: DBusValue) throws(DBusMarshalError) {
        guard case .signature(let v) = dbusValue.unwrapped else { throw DBusSignature.mismatch(dbusValue) }
        self = v
    }
}

extension UnixFD: DBusRepresentable {
    /// `h`
    public static var dbusType: DBusType { .unixFD }
    /// `.unixFD(self)`
    public var dbusValue: DBusValue { .unixFD(self) }
    /// From `.unixFD`: a new owned duplicate (the value keeps its own descriptor).
    public convenience init(dbusValue: DBusValue) throws(DBusMarshalError) {
        guard case .unixFD(let v) = dbusValue.unwrapped else { throw UnixFD.mismatch(dbusValue) }
        self.init(owning: try v.dup().take() ?? -1)
    }
}

extension DBusValue: DBusRepresentable {
    /// `v`: a `DBusValue` used as a Swift type is a variant.
    public static var dbusType: DBusType { .variant }
    /// `.variant(self)`
    public var dbusValue: DBusValue { .variant(self) }
    /// Unwraps one variant layer (a non-variant value is taken as is).
    public init(dbusValue: DBusValue) throws(DBusMarshalError) {
        if case .variant(let inner) = dbusValue { self = inner } else { self = dbusValue }
    }
}

extension Array: DBusRepresentable where Element: DBusRepresentable {
    /// `a` + the element type.
    public static var dbusType: DBusType { .array(Element.dbusType) }

    /// `.bytes` for `[UInt8]`, `.array` otherwise.
    public var dbusValue: DBusValue {
        if let bytes = self as? [UInt8] { return .bytes(bytes) }
        return .array(Element.dbusType, map(\.dbusValue))
    }

    /// From an array whose element type is `Element`'s (any element type for `[DBusValue]`).
    public init(dbusValue: DBusValue) throws(DBusMarshalError) {
        let value = dbusValue.unwrapped
        if case .bytes(let bytes) = value {
            if let typed = bytes as? [Element] {
                self = typed
                return
            }
            guard Element.self == DBusValue.self else { throw Array.mismatch(value) }
            self = try bytes.map { (b) throws(DBusMarshalError) in try Element(dbusValue: .byte(b)) }
            return
        }
        guard case .array(let elementType, let elements) = value,
            elementType == Element.dbusType || Element.self == DBusValue.self
        else { throw Array.mismatch(value) }
        self = try elements.map { (e) throws(DBusMarshalError) in try Element(dbusValue: e) }
    }
}

extension Dictionary: DBusRepresentable where Key: DBusBasicRepresentable, Value: DBusRepresentable {
    /// `a{kv}`.
    public static var dbusType: DBusType { .dictionary(key: Key.dbusType, value: Value.dbusType) }

    /// `.dictionary` (in the dictionary's iteration order).
    public var dbusValue: DBusValue {
        .dictionary(
            key: Key.dbusType, value: Value.dbusType, map { (key: $0.key.dbusValue, value: $0.value.dbusValue) })
    }

    /// From a dictionary with matching key and value types (later duplicate keys win).
    public init(dbusValue: DBusValue) throws(DBusMarshalError) {
        let value = dbusValue.unwrapped
        guard case .dictionary(let keyType, let valueType, let entries) = value, keyType == Key.dbusType,
            valueType == Value.dbusType || Value.self == DBusValue.self
        else { throw Dictionary.mismatch(value) }
        var result: [Key: Value] = [:]
        result.reserveCapacity(entries.count)
        for entry in entries {
            result[try Key(dbusValue: entry.key)] = try Value(dbusValue: entry.value)
        }
        self = result
    }
}

extension Array where Element == DBusValue {
    /// Decodes a whole argument list into typed values: `let (name, props) = try args.decode(String.self,
    /// [String: DBusValue].self)`. Throws if the count or any type differs.
    public func decode<each T: DBusRepresentable>(
        _ types: repeat (each T).Type
    ) throws(DBusMarshalError)
        -> (repeat each T)
    {
        var expected = 0
        for _ in repeat each types { expected += 1 }
        guard expected == count else { throw .argumentCount(expected: expected, actual: count) }
        var index = 0
        func next<U: DBusRepresentable>(_ type: U.Type) throws(DBusMarshalError) -> U {
            defer { index += 1 }
            return try U(dbusValue: self[index])
        }
        return (repeat try next(each types))
    }
}

extension DBusValue {
    /// Decodes the fields of a structure: `let (a, b) = try value.decodeFields(Int32.self, String.self)`.
    public func decodeFields<each T: DBusRepresentable>(
        _ types: repeat (each T).Type
    ) throws(DBusMarshalError)
        -> (repeat each T)
    {
        guard let fields = structureFields else { throw .typeMismatch(expected: "(...)", actual: signature) }
        return try fields.decode(repeat each types)
    }
}
