internal import CDBus

/// Reads a libdbus message body into ``DBusValue``s.
///
/// libdbus validated the body when the message arrived; the reader still checks that each value's type code is the
/// one its signature promised before reading it, so a mismatch is a thrown error, never a misread.
enum MessageReader {
    static func read(_ message: OpaquePointer, signature: DBusSignature) throws(DBusMarshalError) -> [DBusValue] {
        let types = signature.types
        guard signature.rawValue.isEmpty || !types.isEmpty else {
            throw .invalidSignature(signature.rawValue, reason: "not parseable")
        }
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(message, &iter) != 0 else { return [] }
        var values: [DBusValue] = []
        values.reserveCapacity(types.count)
        for (index, type) in types.enumerated() {
            if index > 0 { guard dbus_message_iter_next(&iter) != 0 else { throw truncated(signature) } }
            values.append(try readValue(&iter, type))
        }
        return values
    }

    private static func truncated(_ signature: DBusSignature) -> DBusMarshalError {
        .typeMismatch(expected: signature.rawValue, actual: "a shorter body")
    }

    private static func expect(_ iter: inout DBusMessageIter, _ code: Int32, _ type: DBusType) throws(DBusMarshalError)
    {
        let actual = dbus_message_iter_get_arg_type(&iter)
        guard actual == code else {
            let found = actual == 0 ? "nothing" : String(Character(Unicode.Scalar(UInt8(truncatingIfNeeded: actual))))
            throw .typeMismatch(expected: type.signature, actual: found)
        }
    }

    private static func basic<T: BitwiseCopyable>(
        _ iter: inout DBusMessageIter, _ code: Unicode.Scalar, _ type: DBusType, _ zero: T
    )
        throws(DBusMarshalError) -> T
    {
        try expect(&iter, Int32(UInt8(ascii: code)), type)
        var value = zero
        dbus_message_iter_get_basic(&iter, &value)
        return value
    }

    private static func text(
        _ iter: inout DBusMessageIter, _ code: Unicode.Scalar, _ type: DBusType
    )
        throws(DBusMarshalError) -> String
    {
        let pointer: UnsafePointer<CChar>? = try basic(&iter, code, type, nil)
        return pointer.map { String(cString: $0) } ?? ""
    }

    private static func readValue(
        _ iter: inout DBusMessageIter, _ type: DBusType
    ) throws(DBusMarshalError)
        -> DBusValue
    {
        switch type {
        case .byte: return .byte(try basic(&iter, "y", type, UInt8(0)))
        case .boolean: return .boolean(try basic(&iter, "b", type, dbus_bool_t(0)) != 0)
        case .int16: return .int16(try basic(&iter, "n", type, Int16(0)))
        case .uint16: return .uint16(try basic(&iter, "q", type, UInt16(0)))
        case .int32: return .int32(try basic(&iter, "i", type, Int32(0)))
        case .uint32: return .uint32(try basic(&iter, "u", type, UInt32(0)))
        case .int64: return .int64(try basic(&iter, "x", type, Int64(0)))
        case .uint64: return .uint64(try basic(&iter, "t", type, UInt64(0)))
        case .double: return .double(try basic(&iter, "d", type, Double(0)))
        case .string: return .string(try text(&iter, "s", type))
        case .objectPath: return .objectPath(ObjectPath(trusted: try text(&iter, "o", type)))
        case .signature: return .signature(DBusSignature(trusted: try text(&iter, "g", type)))
        case .unixFD:
            let fd = try basic(&iter, "h", type, Int32(-1))
            guard fd >= 0 else { throw .closedFileDescriptor }
            return .unixFD(UnixFD(owning: fd))
        case .array(.byte):
            try expect(&iter, Int32(UInt8(ascii: "a")), type)
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            guard dbus_message_iter_get_arg_type(&sub) != 0 else { return .bytes([]) }
            try expect(&sub, Int32(UInt8(ascii: "y")), .byte)
            var base: UnsafeRawPointer? = nil
            var count: Int32 = 0
            dbus_message_iter_get_fixed_array(&sub, &base, &count)
            guard let base, count > 0 else { return .bytes([]) }
            return .bytes(
                Array(UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: Int(count))))
        case .array(let element):
            try expect(&iter, Int32(UInt8(ascii: "a")), type)
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            var elements: [DBusValue] = []
            while dbus_message_iter_get_arg_type(&sub) != 0 {
                elements.append(try readValue(&sub, element))
                dbus_message_iter_next(&sub)
            }
            return .array(element, elements)
        case .dictionary(let key, let value):
            try expect(&iter, Int32(UInt8(ascii: "a")), type)
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            var entries: [(key: DBusValue, value: DBusValue)] = []
            while dbus_message_iter_get_arg_type(&sub) != 0 {
                try expect(&sub, MessageWriter.code("e"), type)
                var pair = DBusMessageIter()
                dbus_message_iter_recurse(&sub, &pair)
                let k = try readValue(&pair, key)
                guard dbus_message_iter_next(&pair) != 0 else {
                    throw .typeMismatch(expected: type.signature, actual: "{\(key)}")
                }
                entries.append((key: k, value: try readValue(&pair, value)))
                dbus_message_iter_next(&sub)
            }
            return .dictionary(key: key, value: value, entries)
        case .structure(let fields):
            try expect(&iter, MessageWriter.code("r"), type)
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            var values: [DBusValue] = []
            values.reserveCapacity(fields.count)
            for (index, field) in fields.enumerated() {
                if index > 0 {
                    guard dbus_message_iter_next(&sub) != 0 else {
                        throw .typeMismatch(expected: type.signature, actual: "a shorter struct")
                    }
                }
                values.append(try readValue(&sub, field))
            }
            return .structure(values)
        case .variant:
            try expect(&iter, Int32(UInt8(ascii: "v")), type)
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            guard let raw = dbus_message_iter_get_signature(&sub) else { throw .outOfMemory }
            let signature = String(cString: raw)
            dbus_free(raw)
            let inner = try DBusSignature(signature).types
            guard inner.count == 1 else { throw .invalidSignature(signature, reason: "variant must hold one type") }
            return .variant(try readValue(&sub, inner[0]))
        }
    }
}
