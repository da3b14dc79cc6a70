internal import CDBus

/// A cursor over a message body, for decoders that build their own values straight from libdbus's buffer
/// (no ``DBusValue`` tree in between). Get one from ``DBusMessage/withBodyReader(_:)``; it is valid only inside
/// that closure (and a nested one inside ``withContents(_:)``).
///
/// It stands on one value at a time: ``typeCode`` says what it is, a typed read returns it (nil when the value is
/// of another type), ``next()`` moves on, ``withContents(_:)`` enters an array, dictionary entry, structure or
/// variant. libdbus validated the body when the message arrived; reads never trust a type they did not check.
public struct DBusBodyReader {
    /// libdbus's iterator and the type code of the value it stands on, read once per move.
    fileprivate struct Cursor {
        var iterator = DBusMessageIter()
        var code: Int32 = 0
    }

    private let cursor: UnsafeMutablePointer<Cursor>

    fileprivate init(_ cursor: UnsafeMutablePointer<Cursor>) {
        self.cursor = cursor
    }

    fileprivate var iterator: UnsafeMutablePointer<DBusMessageIter> {
        let offset = MemoryLayout<Cursor>.offset(of: \Cursor.iterator) ?? 0
        return (UnsafeMutableRawPointer(cursor) + offset).assumingMemoryBound(to: DBusMessageIter.self)
    }

    /// The type code of the current value (`UInt8(ascii: "s")`, `"a"`, `"v"`, `"e"` for a dictionary entry,
    /// `"r"` for a structure ...), or nil past the last one.
    public var typeCode: UInt8? {
        let code = cursor.pointee.code
        return code == 0 ? nil : UInt8(truncatingIfNeeded: code)
    }

    /// For an array, the type code of its elements.
    public var elementTypeCode: UInt8? {
        guard typeCode == UInt8(ascii: "a") else { return nil }
        let code = dbus_message_iter_get_element_type(iterator)
        return code == 0 ? nil : UInt8(truncatingIfNeeded: code)
    }

    /// Moves to the next value; false when there is none.
    @discardableResult
    public func next() -> Bool {
        let more = dbus_message_iter_next(iterator) != 0
        cursor.pointee.code = dbus_message_iter_get_arg_type(iterator)
        return more
    }

    /// A string, object path or signature.
    public func string() -> String? {
        switch typeCode {
        case UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"):
            var pointer: UnsafePointer<CChar>? = nil
            dbus_message_iter_get_basic(iterator, &pointer)
            return pointer.map { String(cString: $0) }
        default:
            return nil
        }
    }

    /// A string, object path or signature, shared from `table` when it has it.
    public func string(in table: DBusNameTable) -> String? {
        switch typeCode {
        case UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"):
            var pointer: UnsafePointer<CChar>? = nil
            dbus_message_iter_get_basic(iterator, &pointer)
            return pointer.map { table.string($0) }
        default:
            return nil
        }
    }

    /// A Boolean.
    public func bool() -> Bool? {
        guard typeCode == UInt8(ascii: "b") else { return nil }
        return basic(dbus_bool_t(0)) != 0
    }

    /// A signed integer (`n`, `i`, `x`).
    public func signedInteger() -> Int64? {
        switch typeCode {
        case UInt8(ascii: "n"): Int64(basic(Int16(0)))
        case UInt8(ascii: "i"): Int64(basic(Int32(0)))
        case UInt8(ascii: "x"): basic(Int64(0))
        default: nil
        }
    }

    /// An unsigned integer (`y`, `q`, `u`, `t`).
    public func unsignedInteger() -> UInt64? {
        switch typeCode {
        case UInt8(ascii: "y"): UInt64(basic(UInt8(0)))
        case UInt8(ascii: "q"): UInt64(basic(UInt16(0)))
        case UInt8(ascii: "u"): UInt64(basic(UInt32(0)))
        case UInt8(ascii: "t"): basic(UInt64(0))
        default: nil
        }
    }

    /// A double.
    public func double() -> Double? {
        guard typeCode == UInt8(ascii: "d") else { return nil }
        return basic(Double(0))
    }

    /// A byte array (`ay`), copied out in one piece.
    public func bytes() -> [UInt8]? {
        guard elementTypeCode == UInt8(ascii: "y") else { return nil }
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(iterator, &sub)
        guard dbus_message_iter_get_arg_type(&sub) != 0 else { return [] }
        var base: UnsafeRawPointer? = nil
        var count: Int32 = 0
        dbus_message_iter_get_fixed_array(&sub, &base, &count)
        guard let base, count > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: Int(count)))
    }

    /// Runs `body` with a cursor on the first value inside the current array, dictionary entry, structure or
    /// variant (its ``typeCode`` is nil for an empty array). Nil when the current value is not a container.
    ///
    /// Inlinable, so that a decoder in another module calls it specialised: called generically it looked up
    /// its result's type metadata on every value entered.
    @inlinable
    public func withContents<R>(_ body: (DBusBodyReader) -> R) -> R? {
        var result: R?
        _ = enter { result = body($0) }
        return result
    }

    /// Runs `body` with a cursor on the first value inside the current container; false (and `body` not run)
    /// when the current value is not a container.
    @usableFromInline
    func enter(_ body: (DBusBodyReader) -> Void) -> Bool {
        switch typeCode {
        case UInt8(ascii: "a"), UInt8(ascii: "e"), UInt8(ascii: "r"), UInt8(ascii: "v"):
            var sub = Cursor()
            withUnsafeMutablePointer(to: &sub) { pointer in
                let reader = DBusBodyReader(pointer)
                dbus_message_iter_recurse(iterator, reader.iterator)
                pointer.pointee.code = dbus_message_iter_get_arg_type(reader.iterator)
                body(reader)
            }
            return true
        default:
            return false
        }
    }

    private func basic<T: BitwiseCopyable>(_ zero: T) -> T {
        var value = zero
        dbus_message_iter_get_basic(iterator, &value)
        return value
    }
}

extension DBusMessage {
    /// Runs `body` with a cursor on the first argument of the body (its ``DBusBodyReader/typeCode`` is nil for an
    /// empty body), holding the message's lock.
    public func withBodyReader<R: Sendable>(_ body: (DBusBodyReader) -> R) -> R {
        withRaw { raw in
            var cursor = DBusBodyReader.Cursor()
            return withUnsafeMutablePointer(to: &cursor) { pointer in
                let reader = DBusBodyReader(pointer)
                // False for an empty body; the iterator is set up all the same and stands past the end.
                _ = dbus_message_iter_init(raw, reader.iterator)
                pointer.pointee.code = dbus_message_iter_get_arg_type(reader.iterator)
                return body(reader)
            }
        }
    }
}
