import JSON
import Testing

/// Parses `text`, expecting a `JSONParseError` with exactly this kind, place and reason.
func expectParseError(
    _ text: String, options: JSONParseOptions = JSONParseOptions(), kind: JSONParseError.Kind, line: Int,
    column: Int, reason: String, sourceLocation: SourceLocation = #_sourceLocation
) {
    expectParseError(
        Array(text.utf8), options: options, kind: kind, line: line, column: column, reason: reason,
        sourceLocation: sourceLocation)
}

/// Parses `bytes`, expecting a `JSONParseError` with exactly this kind, place and reason.
func expectParseError(
    _ bytes: [UInt8], options: JSONParseOptions = JSONParseOptions(), kind: JSONParseError.Kind, line: Int,
    column: Int, reason: String, sourceLocation: SourceLocation = #_sourceLocation
) {
    let error = #expect(throws: JSONParseError.self, sourceLocation: sourceLocation) {
        try JSON(parsing: bytes, options: options)
    }
    guard let error else { return }
    #expect(error.kind == kind, sourceLocation: sourceLocation)
    #expect(error.line == line, "line", sourceLocation: sourceLocation)
    #expect(error.column == column, "column", sourceLocation: sourceLocation)
    #expect(error.reason == reason, sourceLocation: sourceLocation)
}

/// `text` nested in `depth` arrays: `[[…text…]]`.
func nestedArrays(_ depth: Int, around text: String = "") -> String {
    String(repeating: "[", count: depth) + text + String(repeating: "]", count: depth)
}
