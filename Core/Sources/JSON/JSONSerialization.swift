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
    /// The value as JSON text: compact text by ``JSONCompactWriter`` (the bytes json-c writes for the value,
    /// without a json-c tree), pretty text by json-c.
    ///
    /// Never fails. Object members keep their order; "/" is not escaped;
    /// control characters, quotes and backslashes are escaped; other Unicode
    /// is written as UTF-8. Doubles are written as the shortest text that reads
    /// back as the same `Double`, always with a fraction or exponent (`2.0`,
    /// `1e+20`), so they stay doubles; non-finite doubles are written as
    /// `null`. An object key containing U+0000 is written with U+FFFD in its
    /// place, because json-c keys are C strings.
    public func serialized(_ style: JSONStyle = .compact) -> String {
        guard style == .compact else { return CJSONRoot(building: self).serialized(pretty: true) }
        var writer = JSONCompactWriter()
        writer.write(self)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// The compact text followed by a newline, as bytes: one JSON Lines
    /// record, the same text as ``serialized(_:)`` writes, with no string in between.
    public func serializedLine() -> [UInt8] {
        var writer = JSONCompactWriter()
        writer.write(self)
        writer.bytes.append(UInt8(ascii: "\n"))
        return writer.bytes
    }

    /// The value as compact JSON text.
    public var description: String { serialized() }
}
