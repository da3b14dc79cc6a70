/// A cursor over a message body, for decoders that build their own values straight from the message's bytes
/// (no ``DBusValue`` tree in between). Get one from ``DBusMessage/withBodyReader(_:)``; it is valid only inside
/// that closure (and a nested one inside ``withContents(_:)``).
///
/// It stands on one value at a time: ``typeCode`` says what it is, a typed read returns it (nil when the value is
/// of another type, or malformed), ``next()`` moves on, ``withContents(_:)`` enters an array, dictionary entry,
/// structure or variant. The body is checked as it is read: a value that leaves its container's bytes, a string
/// that is not UTF-8 or an invalid variant signature reads as nil, and the cursor stops (``typeCode`` nil) at the
/// first value it cannot move past.
public struct DBusBodyReader {
    private let message: WireBytes
    private let cursor: UnsafeMutablePointer<WireCursor>

    fileprivate init(_ message: WireBytes, _ cursor: UnsafeMutablePointer<WireCursor>) {
        self.message = message
        self.cursor = cursor
    }

    /// The type code of the current value (`UInt8(ascii: "s")`, `"a"`, `"v"`, `"e"` for a dictionary entry,
    /// `"r"` for a structure ...), or nil past the last one.
    public var typeCode: UInt8? {
        let code = cursor.pointee.code
        return code == 0 ? nil : code
    }

    /// For an array, the type code of its elements.
    public var elementTypeCode: UInt8? {
        guard cursor.pointee.code == UInt8(ascii: "a") else { return nil }
        return WireCursor.reported(message.byte(cursor.pointee.type + 1))
    }

    /// Moves to the next value; false when there is none.
    @discardableResult
    public func next() -> Bool { cursor.pointee.next(message) }

    /// A string, object path or signature.
    public func string() -> String? { textRange().flatMap { message.text($0) } }

    /// A string, object path or signature, shared from `table` when it has it.
    public func string(in table: DBusNameTable) -> String? { textRange().flatMap { message.text($0, in: table) } }

    private func textRange() -> Range<Int>? {
        let here = cursor.pointee
        switch here.code {
        case UInt8(ascii: "s"):
            return message.stringRange(at: here.position, limit: here.limit)
        case UInt8(ascii: "o"):
            guard let range = message.stringRange(at: here.position, limit: here.limit),
                WireNames.isObjectPath(message.buffer(range))
            else { return nil }
            return range
        case UInt8(ascii: "g"):
            guard let range = message.signatureRange(at: here.position, limit: here.limit),
                WireSignature.isValid(message, range)
            else { return nil }
            return range
        default:
            return nil
        }
    }

    /// A Boolean.
    public func bool() -> Bool? {
        guard let start = cursor.pointee.fixed(UInt8(ascii: "b"), size: 4) else { return nil }
        switch message.uint32(start) {
        case 0: return false
        case 1: return true
        default: return nil
        }
    }

    /// A signed integer (`n`, `i`, `x`).
    public func signedInteger() -> Int64? {
        let here = cursor.pointee
        switch here.code {
        case UInt8(ascii: "n"):
            return here.fixed(here.code, size: 2).map { Int64(Int16(bitPattern: message.uint16($0))) }
        case UInt8(ascii: "i"):
            return here.fixed(here.code, size: 4).map { Int64(Int32(bitPattern: message.uint32($0))) }
        case UInt8(ascii: "x"): return here.fixed(here.code, size: 8).map { Int64(bitPattern: message.uint64($0)) }
        default: return nil
        }
    }

    /// An unsigned integer (`y`, `q`, `u`, `t`).
    public func unsignedInteger() -> UInt64? {
        let here = cursor.pointee
        switch here.code {
        case UInt8(ascii: "y"): return here.fixed(here.code, size: 1).map { UInt64(message.byte($0)) }
        case UInt8(ascii: "q"): return here.fixed(here.code, size: 2).map { UInt64(message.uint16($0)) }
        case UInt8(ascii: "u"): return here.fixed(here.code, size: 4).map { UInt64(message.uint32($0)) }
        case UInt8(ascii: "t"): return here.fixed(here.code, size: 8).map { message.uint64($0) }
        default: return nil
        }
    }

    /// A double.
    public func double() -> Double? {
        cursor.pointee.fixed(UInt8(ascii: "d"), size: 8).map { Double(bitPattern: message.uint64($0)) }
    }

    /// A byte array (`ay`), copied out in one piece.
    public func bytes() -> [UInt8]? {
        let here = cursor.pointee
        guard elementTypeCode == UInt8(ascii: "y"),
            let range = WireValueSkipper.arrayContents(message, type: here.type, at: here.position, limit: here.limit)
        else { return nil }
        return Array(message.buffer(range))
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
    /// when the current value is not a container or is malformed.
    @usableFromInline
    func enter(_ body: (DBusBodyReader) -> Void) -> Bool {
        guard var inner = cursor.pointee.contents(message) else { return false }
        withUnsafeMutablePointer(to: &inner) { body(DBusBodyReader(message, $0)) }
        return true
    }

    /// Runs `body` with a cursor on the first argument of the body of `message`.
    static func reading<R>(_ message: WireMessage, _ body: (DBusBodyReader) -> R) -> R {
        message.withBytes { bytes in
            let header = message.layout
            var cursor = WireCursor(
                position: header.bodyStart, limit: header.length, type: header.signatureRange.lowerBound,
                typeEnd: header.signatureRange.upperBound, isArray: false, depth: 0, bytes: bytes)
            return withUnsafeMutablePointer(to: &cursor) { body(DBusBodyReader(bytes, $0)) }
        }
    }
}
