import DBus

/// Writes a message body as text two ways, through a ``DBusBodyReader`` and from decoded ``DBusValue``s, so that
/// tests and fuzz targets can check the two readings agree value by value. Unix file descriptors are written `?`.
public enum BodyRendering {
    /// The values under `reader`, one after the other, written as ``render(_:)-(DBusValue)`` writes decoded values.
    public static func render(_ reader: DBusBodyReader) -> String {
        var parts: [String] = []
        while let code = reader.typeCode {
            switch code {
            case UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"): parts.append("'\(reader.string() ?? "?")'")
            case UInt8(ascii: "b"): parts.append("\(reader.bool().map { "\($0)" } ?? "?")")
            case UInt8(ascii: "n"), UInt8(ascii: "i"), UInt8(ascii: "x"): parts.append("\(reader.signedInteger() ?? 0)")
            case UInt8(ascii: "y"), UInt8(ascii: "q"), UInt8(ascii: "u"), UInt8(ascii: "t"):
                parts.append("\(reader.unsignedInteger() ?? 0)")
            case UInt8(ascii: "d"): parts.append("\(reader.double() ?? .nan)")
            case UInt8(ascii: "a") where reader.elementTypeCode == UInt8(ascii: "y"):
                parts.append("bytes\(reader.bytes() ?? [])")
            case UInt8(ascii: "a"), UInt8(ascii: "r"), UInt8(ascii: "e"), UInt8(ascii: "v"):
                parts.append(String(UnicodeScalar(code)) + "[" + (reader.withContents { render($0) } ?? "?") + "]")
            default: parts.append("?")
            }
            reader.next()
        }
        return parts.joined(separator: " ")
    }

    /// A decoded value, written as ``render(_:)-(DBusBodyReader)`` writes what a reader sees.
    public static func render(_ value: DBusValue) -> String {
        switch value {
        case .string(let text): "'\(text)'"
        case .objectPath(let path): "'\(path)'"
        case .signature(let signature): "'\(signature)'"
        case .boolean(let flag): "\(flag)"
        case .int16(let number): "\(number)"
        case .int32(let number): "\(number)"
        case .int64(let number): "\(number)"
        case .byte(let number): "\(number)"
        case .uint16(let number): "\(number)"
        case .uint32(let number): "\(number)"
        case .uint64(let number): "\(number)"
        case .double(let number): "\(number)"
        case .unixFD: "?"
        case .bytes(let data): "bytes\(data)"
        case .array(_, let elements): "a[" + elements.map(render).joined(separator: " ") + "]"
        case .dictionary(_, _, let entries):
            "a[" + entries.map { "e[" + render($0.key) + " " + render($0.value) + "]" }.joined(separator: " ") + "]"
        case .structure(let fields): "r[" + fields.map(render).joined(separator: " ") + "]"
        case .variant(let inner): "v[" + render(inner) + "]"
        }
    }

    /// Whether a Unix file descriptor is inside `value` (bytes cannot carry one).
    public static func containsUnixFD(_ value: DBusValue) -> Bool {
        switch value {
        case .unixFD: true
        case .array(_, let elements): elements.contains(where: containsUnixFD)
        case .dictionary(_, _, let entries): entries.contains { containsUnixFD($0.key) || containsUnixFD($0.value) }
        case .structure(let fields): fields.contains(where: containsUnixFD)
        case .variant(let inner): containsUnixFD(inner)
        default: false
        }
    }
}
