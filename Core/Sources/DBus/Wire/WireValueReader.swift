/// Decodes a body in wire form into ``DBusValue``s, following the message's own signature and checking every value
/// as it goes: bounds, array lengths, UTF-8 and NUL-free strings, object path and signature syntax, Booleans of 0
/// or 1, nesting depth, and that the values fill the body exactly.
struct WireValueReader {
    let bytes: WireBytes
    let message: WireMessage
    let limit: Int

    private func malformed(_ what: String) -> DBusMarshalError { .invalidMessage(reason: "malformed body: \(what)") }

    mutating func body(_ signature: DBusSignature, from start: Int) throws(DBusMarshalError) -> [DBusValue] {
        let types = signature.types
        guard signature.rawValue.isEmpty || !types.isEmpty else {
            throw .invalidSignature(signature.rawValue, reason: "not parseable")
        }
        var position = start
        var values: [DBusValue] = []
        values.reserveCapacity(types.count)
        for type in types { values.append(try value(type, at: &position, limit: limit, depth: 0)) }
        guard position == limit else { throw malformed("\(limit - position) bytes after the last value") }
        return values
    }

    private func fixed(_ size: Int, at position: inout Int, limit: Int) throws(DBusMarshalError) -> Int {
        let start = WireBytes.align(position, size)
        guard start + size <= limit else { throw malformed("a value runs past its container") }
        position = start + size
        return start
    }

    private func text(_ range: Range<Int>?, at position: inout Int) throws(DBusMarshalError) -> String {
        guard let range, let text = bytes.text(range) else { throw malformed("a string that is not UTF-8") }
        position = range.upperBound + 1
        return text
    }

    private func value(
        _ type: DBusType, at position: inout Int, limit: Int, depth: Int
    ) throws(DBusMarshalError) -> DBusValue {
        guard depth <= WireBytes.maximumDepth else { throw .nestingTooDeep }
        switch type {
        case .byte: return .byte(bytes.byte(try fixed(1, at: &position, limit: limit)))
        case .boolean:
            switch bytes.uint32(try fixed(4, at: &position, limit: limit)) {
            case 0: return .boolean(false)
            case 1: return .boolean(true)
            default: throw malformed("a Boolean that is neither 0 nor 1")
            }
        case .int16: return .int16(Int16(bitPattern: bytes.uint16(try fixed(2, at: &position, limit: limit))))
        case .uint16: return .uint16(bytes.uint16(try fixed(2, at: &position, limit: limit)))
        case .int32: return .int32(Int32(bitPattern: bytes.uint32(try fixed(4, at: &position, limit: limit))))
        case .uint32: return .uint32(bytes.uint32(try fixed(4, at: &position, limit: limit)))
        case .int64: return .int64(Int64(bitPattern: bytes.uint64(try fixed(8, at: &position, limit: limit))))
        case .uint64: return .uint64(bytes.uint64(try fixed(8, at: &position, limit: limit)))
        case .double: return .double(Double(bitPattern: bytes.uint64(try fixed(8, at: &position, limit: limit))))
        case .string: return .string(try text(bytes.stringRange(at: position, limit: limit), at: &position))
        case .objectPath:
            let range = bytes.stringRange(at: position, limit: limit)
            guard let range, WireNames.isObjectPath(bytes.buffer(range)) else {
                throw malformed("an invalid object path")
            }
            return .objectPath(ObjectPath(trusted: try text(range, at: &position)))
        case .signature:
            let range = bytes.signatureRange(at: position, limit: limit)
            guard let range, WireSignature.isValid(bytes, range) else { throw malformed("an invalid signature") }
            return .signature(DBusSignature(trusted: try text(range, at: &position)))
        case .unixFD:
            let index = bytes.uint32(try fixed(4, at: &position, limit: limit))
            return .unixFD(try message.unixFD(at: Int(index)))
        case .array(let element):
            let range = try arrayContents(at: &position, limit: limit, elementAlignment: Self.alignment(of: element))
            if element == .byte { return .bytes(Array(bytes.buffer(range))) }
            var inner = range.lowerBound
            var elements: [DBusValue] = []
            while WireBytes.align(inner, Self.alignment(of: element)) < range.upperBound {
                elements.append(try value(element, at: &inner, limit: range.upperBound, depth: depth + 1))
            }
            guard inner == range.upperBound else { throw malformed("bytes after an array's last element") }
            return .array(element, elements)
        case .dictionary(let key, let valueType):
            let range = try arrayContents(at: &position, limit: limit, elementAlignment: 8)
            var inner = range.lowerBound
            var entries: [(key: DBusValue, value: DBusValue)] = []
            while WireBytes.align(inner, 8) < range.upperBound {
                inner = WireBytes.align(inner, 8)
                let k = try value(key, at: &inner, limit: range.upperBound, depth: depth + 2)
                entries.append(
                    (key: k, value: try value(valueType, at: &inner, limit: range.upperBound, depth: depth + 2)))
            }
            guard inner == range.upperBound else { throw malformed("bytes after a dictionary's last entry") }
            return .dictionary(key: key, value: valueType, entries)
        case .structure(let fields):
            position = WireBytes.align(position, 8)
            guard position <= limit else { throw malformed("a structure runs past its container") }
            var values: [DBusValue] = []
            values.reserveCapacity(fields.count)
            for field in fields { values.append(try value(field, at: &position, limit: limit, depth: depth + 1)) }
            return .structure(values)
        case .variant:
            guard let range = bytes.signatureRange(at: position, limit: limit),
                WireSignature.isSingleCompleteType(bytes, range), let text = bytes.text(range)
            else { throw malformed("a variant without a single complete type") }
            position = range.upperBound + 1
            let inner = try SignatureParser.parse(text)
            guard inner.count == 1 else { throw .invalidSignature(text, reason: "variant must hold one type") }
            return .variant(try value(inner[0], at: &position, limit: limit, depth: depth + 1))
        }
    }

    /// The byte range of an array's elements; moves `position` past the array.
    private func arrayContents(
        at position: inout Int, limit: Int, elementAlignment: Int
    ) throws(DBusMarshalError) -> Range<Int> {
        let start = try fixed(4, at: &position, limit: limit)
        let length = Int(bytes.uint32(start))
        guard length <= WireBytes.maximumArrayLength else { throw .arrayTooLong(bytes: length) }
        let contents = WireBytes.align(start + 4, elementAlignment)
        guard contents <= limit, length <= limit - contents else { throw malformed("an array runs past its container") }
        position = contents + length
        return contents..<position
    }

    /// The alignment of values of `type`.
    static func alignment(of type: DBusType) -> Int {
        switch type {
        case .byte, .signature, .variant: 1
        case .int16, .uint16: 2
        case .boolean, .int32, .uint32, .string, .objectPath, .unixFD, .array, .dictionary: 4
        case .int64, .uint64, .double, .structure: 8
        }
    }
}
