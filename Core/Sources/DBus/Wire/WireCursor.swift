/// Where a ``DBusBodyReader`` stands: the value it is on, inside one container (the body itself, an array, a
/// structure, a dict entry or a variant). Positions are offsets into the message; signature positions index the
/// signature bytes inside the message (the header's body signature, or a variant's).
struct WireCursor {
    /// Where the current value starts, before its alignment.
    var position: Int
    /// The end of the container's bytes.
    var limit: Int
    /// The signature index of the current value's type (for an array, of its element type).
    var type: Int
    /// The index just past this level's signature (a structure's closing bracket, the end of the body's or a
    /// variant's signature); unused in an array.
    var typeEnd: Int
    /// Whether this level is an array, whose one element type repeats until ``limit``.
    var isArray: Bool
    /// How many containers enclose this level.
    var depth: Int
    /// The current value's type code (`r` for a structure, `e` for a dict entry), or 0 past the end or after
    /// malformed bytes.
    var code: UInt8 = 0

    init(position: Int, limit: Int, type: Int, typeEnd: Int, isArray: Bool, depth: Int, bytes: WireBytes) {
        self.position = position
        self.limit = limit
        self.type = type
        self.typeEnd = typeEnd
        self.isArray = isArray
        self.depth = depth
        settle(bytes)
    }

    /// Maps a signature code to the code a reader reports.
    @inline(__always)
    static func reported(_ code: UInt8) -> UInt8 {
        switch code {
        case UInt8(ascii: "("): UInt8(ascii: "r")
        case UInt8(ascii: "{"): UInt8(ascii: "e")
        default: code
        }
    }

    /// Finds the current value's type code after a move.
    private mutating func settle(_ bytes: WireBytes) {
        if isArray {
            let alignment = WireSignature.alignment(of: bytes.byte(type)) ?? 1
            code = WireBytes.align(position, alignment) < limit ? Self.reported(bytes.byte(type)) : 0
        } else {
            code = type < typeEnd ? Self.reported(bytes.byte(type)) : 0
        }
    }

    /// Moves past the current value; false when there is no next one (or the current one is malformed).
    mutating func next(_ bytes: WireBytes) -> Bool {
        guard code != 0 else { return false }
        guard let end = WireValueSkipper.end(bytes, type: type, at: position, limit: limit, depth: depth) else {
            code = 0
            return false
        }
        position = end
        if !isArray { type = WireSignature.completeTypeEnd(bytes, at: type) }
        settle(bytes)
        return code != 0
    }

    /// The offset of a fixed-size value of `size` bytes of type `expected`, if the cursor is on one and it fits.
    @inline(__always)
    func fixed(_ expected: UInt8, size: Int) -> Int? {
        guard code == expected else { return nil }
        let start = WireBytes.align(position, size)
        return start + size <= limit ? start : nil
    }

    /// A cursor on the first value inside the current container, or nil when the current value is not a container,
    /// is malformed, or would nest deeper than the format allows.
    func contents(_ bytes: WireBytes) -> WireCursor? {
        guard depth < WireBytes.maximumDepth else { return nil }
        switch code {
        case UInt8(ascii: "a"):
            guard let range = WireValueSkipper.arrayContents(bytes, type: type, at: position, limit: limit) else {
                return nil
            }
            return WireCursor(
                position: range.lowerBound, limit: range.upperBound, type: type + 1, typeEnd: type + 1, isArray: true,
                depth: depth + 1, bytes: bytes)
        case UInt8(ascii: "r"), UInt8(ascii: "e"):
            let start = WireBytes.align(position, 8)
            guard start <= limit else { return nil }
            return WireCursor(
                position: start, limit: limit, type: type + 1,
                typeEnd: WireSignature.completeTypeEnd(bytes, at: type) - 1, isArray: false, depth: depth + 1,
                bytes: bytes)
        case UInt8(ascii: "v"):
            guard let signature = bytes.signatureRange(at: position, limit: limit),
                WireSignature.isSingleCompleteType(bytes, signature)
            else { return nil }
            return WireCursor(
                position: signature.upperBound + 1, limit: limit, type: signature.lowerBound,
                typeEnd: signature.upperBound, isArray: false, depth: depth + 1, bytes: bytes)
        default:
            return nil
        }
    }
}
