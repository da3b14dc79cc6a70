/// Finds where a value ends without decoding it: what moving past a value, or over a header field of an unknown
/// code, needs. Only the structure is checked (bounds, lengths, a variant's signature); the contents of arrays are
/// jumped over by their length.
enum WireValueSkipper {
    /// The offset just past the value of the complete type at signature index `type` that starts at `offset`
    /// (before its alignment), or nil when it would leave `limit` or is malformed.
    static func end(_ bytes: WireBytes, type: Int, at offset: Int, limit: Int, depth: Int) -> Int? {
        guard depth <= WireBytes.maximumDepth else { return nil }
        let code = bytes.byte(type)
        if let size = WireSignature.fixedSize(of: code) {
            let start = WireBytes.align(offset, size)
            return start + size <= limit ? start + size : nil
        }
        switch code {
        case UInt8(ascii: "s"), UInt8(ascii: "o"):
            return bytes.stringRange(at: offset, limit: limit).map { $0.upperBound + 1 }
        case UInt8(ascii: "g"):
            return bytes.signatureRange(at: offset, limit: limit).map { $0.upperBound + 1 }
        case UInt8(ascii: "v"):
            guard let signature = bytes.signatureRange(at: offset, limit: limit),
                WireSignature.isSingleCompleteType(bytes, signature)
            else { return nil }
            return end(bytes, type: signature.lowerBound, at: signature.upperBound + 1, limit: limit, depth: depth + 1)
        case UInt8(ascii: "a"):
            return arrayContents(bytes, type: type, at: offset, limit: limit)?.upperBound
        case UInt8(ascii: "("), UInt8(ascii: "{"):
            var field = type + 1
            var position = WireBytes.align(offset, 8)
            guard position <= limit else { return nil }
            while bytes.byte(field) != UInt8(ascii: ")") && bytes.byte(field) != UInt8(ascii: "}") {
                guard let next = end(bytes, type: field, at: position, limit: limit, depth: depth + 1) else {
                    return nil
                }
                position = next
                field = WireSignature.completeTypeEnd(bytes, at: field)
            }
            return position
        default:
            return nil
        }
    }

    /// The byte range of the elements of the array of type `type` (an `a` in the signature) at `offset`.
    static func arrayContents(_ bytes: WireBytes, type: Int, at offset: Int, limit: Int) -> Range<Int>? {
        let start = WireBytes.align(offset, 4)
        guard start + 4 <= limit else { return nil }
        let length = Int(bytes.uint32(start))
        guard length <= WireBytes.maximumArrayLength,
            let alignment = WireSignature.alignment(of: bytes.byte(type + 1))
        else { return nil }
        let contents = WireBytes.align(start + 4, alignment)
        guard contents <= limit, length <= limit - contents else { return nil }
        return contents..<(contents + length)
    }
}
