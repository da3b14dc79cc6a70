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
        var text = ""
        appendCompact(to: &text)
        return text
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
    private func appendCompact(to text: inout String) {
        guard holdsLargeArray else {
            text += CJSONRoot(building: self).serialized(pretty: false)
            return
        }
        switch self {
        case .array(let elements):
            text += "["
            for (position, element) in elements.enumerated() {
                if position > 0 { text += "," }
                element.appendCompact(to: &text)
            }
            text += "]"
        case .object(let members):
            text += "{"
            for (position, member) in members.enumerated() {
                if position > 0 { text += "," }
                text += CJSONRoot.serializedKey(member.key)
                text += ":"
                member.value.appendCompact(to: &text)
            }
            text += "}"
        default:
            text += CJSONRoot(building: self).serialized(pretty: false)
        }
    }

    /// The value as compact JSON text.
    public var description: String { serialized() }
}
