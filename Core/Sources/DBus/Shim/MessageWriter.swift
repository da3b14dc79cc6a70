internal import CDBus

/// Appends ``DBusValue``s to a libdbus message, checking every value against its declared type first.
///
/// libdbus trusts its caller (a wrong element type corrupts the message, an invalid signature aborts the process),
/// so the whole body signature is validated up front and each array element, dictionary entry and structure field
/// is checked against the type its container declares before it is written.
enum MessageWriter {
    /// The D-Bus limit on total container nesting in a message (arrays, structs and variants together).
    static let maximumDepth = 64
    /// `DBUS_MAXIMUM_ARRAY_LENGTH`: 64 MiB.
    static let maximumArrayLength = 67_108_864

    static func append(_ values: [DBusValue], to message: OpaquePointer) throws(DBusMarshalError) {
        guard !values.isEmpty else { return }
        var signature = ""
        for value in values { value.type.appendSignature(to: &signature) }
        _ = try DBusSignature(signature)
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(message, &iter)
        for value in values { try write(value, expected: nil, into: &iter, depth: 0) }
    }

    private static func write(
        _ value: DBusValue, expected: DBusType?, into iter: inout DBusMessageIter, depth: Int
    )
        throws(DBusMarshalError)
    {
        if let expected, !value.hasShape(of: expected) {
            throw .typeMismatch(expected: expected.signature, actual: value.signature)
        }
        switch value {
        case .byte(let v): try appendBasic(&iter, "y", v)
        case .boolean(let v): try appendBasic(&iter, "b", dbus_bool_t(v ? 1 : 0))
        case .int16(let v): try appendBasic(&iter, "n", v)
        case .uint16(let v): try appendBasic(&iter, "q", v)
        case .int32(let v): try appendBasic(&iter, "i", v)
        case .uint32(let v): try appendBasic(&iter, "u", v)
        case .int64(let v): try appendBasic(&iter, "x", v)
        case .uint64(let v): try appendBasic(&iter, "t", v)
        case .double(let v): try appendBasic(&iter, "d", v)
        case .string(let v): try appendString(&iter, "s", v)
        case .objectPath(let v): try appendString(&iter, "o", v.rawValue)
        case .signature(let v): try appendString(&iter, "g", v.rawValue)
        case .unixFD(let fd):
            try fd.withDescriptor { (raw) throws(DBusMarshalError) in try appendBasic(&iter, "h", raw) }
        case .bytes(let bytes):
            guard bytes.count <= maximumArrayLength else { throw .arrayTooLong(bytes: bytes.count) }
            try container(&iter, "a", "y", depth) { (sub) throws(DBusMarshalError) in
                guard !bytes.isEmpty else { return }
                let ok = bytes.withUnsafeBufferPointer { buffer in
                    var base = buffer.baseAddress
                    return dbus_message_iter_append_fixed_array(&sub, code("y"), &base, Int32(buffer.count))
                }
                guard ok != 0 else { throw .outOfMemory }
            }
        case .array(let element, let elements):
            try container(&iter, "a", element.signature, depth) { (sub) throws(DBusMarshalError) in
                for item in elements { try write(item, expected: element, into: &sub, depth: depth + 1) }
            }
        case .dictionary(let key, let valueType, let entries):
            guard key.isBasic else { throw .invalidSignature(value.signature, reason: "dict key must be basic") }
            let entrySignature = "{" + key.signature + valueType.signature + "}"
            try container(&iter, "a", entrySignature, depth) { (sub) throws(DBusMarshalError) in
                for entry in entries {
                    try container(&sub, "e", nil, depth + 1) { (pair) throws(DBusMarshalError) in
                        try write(entry.key, expected: key, into: &pair, depth: depth + 2)
                        try write(entry.value, expected: valueType, into: &pair, depth: depth + 2)
                    }
                }
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw .emptyStructure }
            let fieldTypes: [DBusType]? = if case .structure(let types) = expected { types } else { nil }
            try container(&iter, "r", nil, depth) { (sub) throws(DBusMarshalError) in
                for (index, field) in fields.enumerated() {
                    try write(field, expected: fieldTypes?[index], into: &sub, depth: depth + 1)
                }
            }
        case .variant(let inner):
            let signature = inner.signature
            _ = try DBusSignature(signature)
            try container(&iter, "v", signature, depth) { (sub) throws(DBusMarshalError) in
                try write(inner, expected: nil, into: &sub, depth: depth + 1)
            }
        }
    }

    /// The libdbus type code of a signature character (`r` is a struct, `e` a dict entry).
    static func code(_ c: Unicode.Scalar) -> Int32 { Int32(UInt8(ascii: c)) }

    private static func appendBasic<T: BitwiseCopyable>(
        _ iter: inout DBusMessageIter, _ type: Unicode.Scalar, _ value: T
    )
        throws(DBusMarshalError)
    {
        var copy = value
        guard dbus_message_iter_append_basic(&iter, code(type), &copy) != 0 else { throw .outOfMemory }
    }

    private static func appendString(
        _ iter: inout DBusMessageIter, _ type: Unicode.Scalar, _ text: String
    )
        throws(DBusMarshalError)
    {
        guard !text.utf8.contains(0) else { throw .stringContainsNUL }
        let ok = text.withCString { cString in
            var pointer: UnsafePointer<CChar>? = cString
            return dbus_message_iter_append_basic(&iter, code(type), &pointer)
        }
        guard ok != 0 else { throw .outOfMemory }
    }

    /// Opens a container (`a`, `v`, `r` for a struct, `e` for a dict entry), fills it, closes it; abandons it if
    /// filling throws, leaving the message to be discarded.
    private static func container(
        _ iter: inout DBusMessageIter, _ type: Unicode.Scalar, _ signature: String?, _ depth: Int,
        _ fill: (inout DBusMessageIter) throws(DBusMarshalError) -> Void
    ) throws(DBusMarshalError) {
        guard depth < maximumDepth else { throw .nestingTooDeep }
        var sub = DBusMessageIter()
        let typeCode = code(type)
        let opened =
            if let signature {
                signature.withCString { dbus_message_iter_open_container(&iter, typeCode, $0, &sub) }
            } else {
                dbus_message_iter_open_container(&iter, typeCode, nil, &sub)
            }
        guard opened != 0 else { throw .outOfMemory }
        do throws(DBusMarshalError) {
            try fill(&sub)
        } catch {
            dbus_message_iter_abandon_container(&iter, &sub)
            throw error
        }
        guard dbus_message_iter_close_container(&iter, &sub) != 0 else { throw .outOfMemory }
    }
}

extension DBusValue {
    /// Whether the outer shape of this value fits `type` (container element types must be identical; nested values
    /// are checked as they are written).
    func hasShape(of type: DBusType) -> Bool {
        switch (self, type) {
        case (.byte, .byte), (.boolean, .boolean), (.int16, .int16), (.uint16, .uint16), (.int32, .int32),
            (.uint32, .uint32), (.int64, .int64), (.uint64, .uint64), (.double, .double), (.string, .string),
            (.objectPath, .objectPath), (.signature, .signature), (.unixFD, .unixFD), (.variant, .variant):
            true
        case (.bytes, .array(.byte)): true
        case (.array(let element, _), .array(let expected)): element == expected
        case (.dictionary(let key, let value, _), .dictionary(let expectedKey, let expectedValue)):
            key == expectedKey && value == expectedValue
        case (.structure(let fields), .structure(let expected)): fields.count == expected.count
        default: false
        }
    }
}
