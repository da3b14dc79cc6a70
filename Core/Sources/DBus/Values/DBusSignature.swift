/// A validated D-Bus type signature: zero or more complete types, such as `"sa{sv}as"`.
///
/// Validation follows the D-Bus specification: at most 255 bytes, arrays and structures each nested at most 32 deep,
/// dict entries only directly inside arrays with a basic key and exactly one value type, no empty structures.
public struct DBusSignature: Sendable, Hashable, CustomStringConvertible {
    /// The signature text.
    public let rawValue: String
    /// The types, when parsed at creation; a signature read from a message is parsed when its types are asked for.
    private let parsedTypes: [DBusType]?

    /// The complete types, in order.
    public var types: [DBusType] {
        parsedTypes ?? (try? SignatureParser.parse(rawValue)) ?? []
    }

    /// Validates and parses `text`.
    public init(_ text: String) throws(DBusMarshalError) {
        rawValue = text
        parsedTypes = try SignatureParser.parse(text)
    }

    /// The signature of `types`; throws if it breaks the D-Bus limits (length, nesting).
    public init(_ types: [DBusType]) throws(DBusMarshalError) {
        var text = ""
        for type in types { type.appendSignature(to: &text) }
        try self.init(text)
    }

    /// Wraps text that libdbus already validated; its types are parsed when asked for (most messages are read
    /// by their signature's text, not its types).
    init(trusted text: String) {
        rawValue = text
        parsedTypes = nil
    }

    /// The empty signature (no arguments).
    public static let empty = DBusSignature(trusted: "")

    /// The signature text.
    public var description: String { rawValue }

    /// Signatures are equal when their text is.
    public static func == (lhs: DBusSignature, rhs: DBusSignature) -> Bool { lhs.rawValue == rhs.rawValue }

    /// Hashes the text.
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    /// The D-Bus limits on signatures.
    static let maximumLength = 255
    static let maximumArrayDepth = 32
    static let maximumStructDepth = 32
}

/// A recursive-descent parser for signatures, enforcing the specification's limits.
struct SignatureParser {
    private let text: String
    private let bytes: [UInt8]
    private var index = 0

    static func parse(_ text: String) throws(DBusMarshalError) -> [DBusType] {
        guard text.utf8.count <= DBusSignature.maximumLength else {
            throw .invalidSignature(text, reason: "longer than 255 bytes")
        }
        var parser = SignatureParser(text: text)
        var types: [DBusType] = []
        while parser.index < parser.bytes.count {
            types.append(try parser.parseType(arrayDepth: 0, structDepth: 0))
        }
        return types
    }

    private init(text: String) {
        self.text = text
        bytes = Array(text.utf8)
    }

    private func fail(_ reason: String) -> DBusMarshalError { .invalidSignature(text, reason: reason) }

    private mutating func parseType(arrayDepth: Int, structDepth: Int) throws(DBusMarshalError) -> DBusType {
        guard index < bytes.count else { throw fail("incomplete type at the end") }
        let code = bytes[index]
        index += 1
        if let basic = SignatureParser.basicType(code) { return basic }
        switch code {
        case UInt8(ascii: "v"):
            return .variant
        case UInt8(ascii: "a"):
            guard arrayDepth < DBusSignature.maximumArrayDepth else { throw fail("arrays nested deeper than 32") }
            if index < bytes.count, bytes[index] == UInt8(ascii: "{") {
                index += 1
                return try parseDictEntry(arrayDepth: arrayDepth + 1, structDepth: structDepth)
            }
            return .array(try parseType(arrayDepth: arrayDepth + 1, structDepth: structDepth))
        case UInt8(ascii: "("):
            guard structDepth < DBusSignature.maximumStructDepth else {
                throw fail("structures nested deeper than 32")
            }
            var fields: [DBusType] = []
            while true {
                guard index < bytes.count else { throw fail("unclosed structure") }
                if bytes[index] == UInt8(ascii: ")") {
                    index += 1
                    break
                }
                fields.append(try parseType(arrayDepth: arrayDepth, structDepth: structDepth + 1))
            }
            guard !fields.isEmpty else { throw fail("empty structure") }
            return .structure(fields)
        case UInt8(ascii: "{"):
            throw fail("dict entry outside an array")
        default:
            throw fail("unknown type code \"\(Character(Unicode.Scalar(code)))\"")
        }
    }

    private mutating func parseDictEntry(arrayDepth: Int, structDepth: Int) throws(DBusMarshalError) -> DBusType {
        guard index < bytes.count, let key = SignatureParser.basicType(bytes[index]) else {
            throw fail("dict entry key must be a basic type")
        }
        index += 1
        let value = try parseType(arrayDepth: arrayDepth, structDepth: structDepth)
        guard index < bytes.count, bytes[index] == UInt8(ascii: "}") else {
            throw fail("dict entry must have exactly one key and one value")
        }
        index += 1
        return .dictionary(key: key, value: value)
    }

    private static func basicType(_ code: UInt8) -> DBusType? {
        switch code {
        case UInt8(ascii: "y"): .byte
        case UInt8(ascii: "b"): .boolean
        case UInt8(ascii: "n"): .int16
        case UInt8(ascii: "q"): .uint16
        case UInt8(ascii: "i"): .int32
        case UInt8(ascii: "u"): .uint32
        case UInt8(ascii: "x"): .int64
        case UInt8(ascii: "t"): .uint64
        case UInt8(ascii: "d"): .double
        case UInt8(ascii: "s"): .string
        case UInt8(ascii: "o"): .objectPath
        case UInt8(ascii: "g"): .signature
        case UInt8(ascii: "h"): .unixFD
        default: nil
        }
    }
}
