/// The signature grammar over signature bytes inside a message: validating a signature read from the wire, and
/// walking a validated one (alignment of each type code, where a complete type ends).
enum WireSignature {
    /// The longest signature the format allows.
    static let maximumLength = 255
    /// The deepest nesting of arrays, and separately of structures and dict entries, within one signature.
    static let maximumDepth = 32

    /// The alignment of values of type `code`, or nil when `code` does not start a type.
    @inline(__always)
    static func alignment(of code: UInt8) -> Int? {
        switch code {
        case UInt8(ascii: "y"), UInt8(ascii: "g"), UInt8(ascii: "v"): 1
        case UInt8(ascii: "n"), UInt8(ascii: "q"): 2
        case UInt8(ascii: "b"), UInt8(ascii: "i"), UInt8(ascii: "u"), UInt8(ascii: "s"), UInt8(ascii: "o"),
            UInt8(ascii: "a"), UInt8(ascii: "h"):
            4
        case UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "("), UInt8(ascii: "{"): 8
        default: nil
        }
    }

    /// The size of a fixed-size basic type, or nil for any other code.
    @inline(__always)
    static func fixedSize(of code: UInt8) -> Int? {
        switch code {
        case UInt8(ascii: "y"): 1
        case UInt8(ascii: "n"), UInt8(ascii: "q"): 2
        case UInt8(ascii: "b"), UInt8(ascii: "i"), UInt8(ascii: "u"), UInt8(ascii: "h"): 4
        case UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"): 8
        default: nil
        }
    }

    /// Whether `code` is a basic type (allowed as a dict entry's key).
    static func isBasic(_ code: UInt8) -> Bool {
        fixedSize(of: code) != nil || code == UInt8(ascii: "s") || code == UInt8(ascii: "o")
            || code == UInt8(ascii: "g")
    }

    /// The index just past the complete type starting at `start` of an already validated signature.
    static func completeTypeEnd(_ bytes: WireBytes, at start: Int) -> Int {
        var index = start
        while bytes.byte(index) == UInt8(ascii: "a") { index += 1 }
        var open = 0
        repeat {
            switch bytes.byte(index) {
            case UInt8(ascii: "("), UInt8(ascii: "{"): open += 1
            case UInt8(ascii: ")"), UInt8(ascii: "}"): open -= 1
            default: break
            }
            index += 1
        } while open > 0
        return index
    }

    /// Whether the bytes in `range` are a valid signature: a sequence of complete types within the format's limits.
    static func isValid(_ bytes: WireBytes, _ range: Range<Int>) -> Bool {
        guard range.count <= maximumLength else { return false }
        var index = range.lowerBound
        while index < range.upperBound {
            guard let end = validType(bytes, at: index, limit: range.upperBound, arrays: 0, structs: 0) else {
                return false
            }
            index = end
        }
        return true
    }

    /// Whether the bytes in `range` are exactly one complete type (a variant's signature).
    static func isSingleCompleteType(_ bytes: WireBytes, _ range: Range<Int>) -> Bool {
        guard !range.isEmpty, range.count <= maximumLength else { return false }
        return validType(bytes, at: range.lowerBound, limit: range.upperBound, arrays: 0, structs: 0)
            == range.upperBound
    }

    /// The end of the valid complete type at `index`, or nil.
    private static func validType(_ bytes: WireBytes, at index: Int, limit: Int, arrays: Int, structs: Int) -> Int? {
        guard index < limit else { return nil }
        let code = bytes.byte(index)
        switch code {
        case UInt8(ascii: "a"):
            guard arrays < maximumDepth, index + 1 < limit else { return nil }
            if bytes.byte(index + 1) == UInt8(ascii: "{") {
                guard structs < maximumDepth, index + 2 < limit, isBasic(bytes.byte(index + 2)),
                    let valueEnd = validType(
                        bytes, at: index + 3, limit: limit, arrays: arrays + 1, structs: structs + 1),
                    valueEnd < limit, bytes.byte(valueEnd) == UInt8(ascii: "}")
                else { return nil }
                return valueEnd + 1
            }
            return validType(bytes, at: index + 1, limit: limit, arrays: arrays + 1, structs: structs)
        case UInt8(ascii: "("):
            guard structs < maximumDepth else { return nil }
            var field = index + 1
            guard field < limit, bytes.byte(field) != UInt8(ascii: ")") else { return nil }
            while field < limit, bytes.byte(field) != UInt8(ascii: ")") {
                guard let end = validType(bytes, at: field, limit: limit, arrays: arrays, structs: structs + 1) else {
                    return nil
                }
                field = end
            }
            return field < limit ? field + 1 : nil
        default:
            guard code != UInt8(ascii: "{"), alignment(of: code) != nil else { return nil }
            return index + 1
        }
    }
}
