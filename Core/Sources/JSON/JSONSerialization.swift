/// How ``JSON/serialized(_:)`` lays out text.
public enum JSONStyle: Sendable, Hashable {
    /// One line, no spaces: `{"a":[1,2]}`. Newlines inside strings are
    /// escaped, so the text never contains a raw line break (safe for JSON Lines).
    case compact
    /// Indented by two spaces with one member or element per line and a space
    /// after each colon. Empty arrays and objects span two lines (json-c's layout).
    case pretty
}

extension JSON: CustomStringConvertible {
    /// The value as JSON text, written by json-c.
    ///
    /// Never fails. Object members keep their order; "/" is not escaped;
    /// control characters, quotes and backslashes are escaped; other Unicode
    /// is written as UTF-8. Doubles are written as the shortest text that reads
    /// back as the same `Double`, always with a fraction or exponent (`2.0`,
    /// `1e+20`), so they stay doubles; non-finite doubles are written as
    /// `null`. An object key containing U+0000 is written with U+FFFD in its
    /// place, because json-c keys are C strings.
    ///
    /// A compact value holding a large array (more than
    /// ``JSON/pieceThreshold`` elements: a listing of thousands of devices) is
    /// written piece by piece, each element (and each object member on the way
    /// to it) through json-c on its own, so the text is the same but json-c
    /// never holds a tree of the whole value beside the Swift one.
    public func serialized(_ style: JSONStyle = .compact) -> String {
        guard style == .compact, holdsLargeArray else {
            return CJSONRoot(building: self).serialized(pretty: style == .pretty)
        }
        var bytes: [UInt8] = []
        appendCompact(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The compact text followed by a newline, as bytes: one JSON Lines
    /// record, the same text as ``serialized(_:)`` writes, put straight into
    /// the bytes (a large array piece by piece) with no string in between.
    public func serializedLine() -> [UInt8] {
        var bytes: [UInt8] = []
        appendCompact(to: &bytes)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// Arrays longer than this are serialised element by element (compact style).
    static let pieceThreshold = 256

    /// Whether an array longer than ``pieceThreshold`` lies anywhere in the value.
    private var holdsLargeArray: Bool {
        switch self {
        case .array(let elements): elements.count > Self.pieceThreshold || elements.contains { $0.holdsLargeArray }
        case .object(let members): members.contains { $0.value.holdsLargeArray }
        default: false
        }
    }

    /// Appends the compact text: containers on the way to a large array in Swift, everything else by json-c.
    private func appendCompact(to bytes: inout [UInt8]) {
        guard holdsLargeArray else {
            CJSONRoot(building: self).appendSerialized(to: &bytes)
            return
        }
        switch self {
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                element.appendCompact(to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (position, member) in members.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                bytes.append(contentsOf: CJSONRoot.serializedKey(member.key).utf8)
                bytes.append(UInt8(ascii: ":"))
                member.value.appendCompact(to: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        default:
            CJSONRoot(building: self).appendSerialized(to: &bytes)
        }
    }

    /// The value as compact JSON text.
    public var description: String { serialized() }
}
