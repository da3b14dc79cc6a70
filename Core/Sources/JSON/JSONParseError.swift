/// Why some text is not an acceptable JSON value, and where.
///
/// `line` and `column` are 1-based; `column` counts Unicode scalars (UTF-8
/// characters, a tab counts as one) from the start of the line, and `offset`
/// is the 0-based byte offset of the same place. An error at the end of the
/// input points just past its last byte.
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem.
    public enum Kind: Sendable, Hashable {
        /// The input is empty or only whitespace.
        case emptyInput
        /// The input ends inside a value (truncated input).
        case unexpectedEnd
        /// The text is not JSON at this place.
        case syntax
        /// Something other than whitespace follows the value.
        case trailingData
        /// The bytes are not valid UTF-8.
        case invalidUTF8
        /// A raw NUL byte, which JSON text never contains (inside strings it is written `\u0000`).
        case nulByte
        /// A number outside the range of `Int64` (under ``JSONParseOptions/LargeIntegerPolicy/reject``)
        /// or too large for a `Double`.
        case numberOutOfRange
        /// An object key containing `\u0000`, which json-c cannot keep (it would cut the key short).
        case unsupportedKey
        /// An object repeats a key (under ``JSONParseOptions/DuplicateKeyPolicy/reject``).
        case duplicateKey
        /// The text starts with a UTF-8 byte order mark (U+FEFF), which JSON text must not have.
        case byteOrderMark
        /// Arrays and objects nest deeper than ``JSONParseOptions/maxDepth``.
        case depthLimitExceeded(limit: Int)
        /// The input is longer than ``JSONParseOptions/maxInputBytes``.
        case sizeLimitExceeded(size: Int, limit: Int)
    }

    /// The kind of problem.
    public let kind: Kind
    /// The 1-based line of the problem.
    public let line: Int
    /// The 1-based column of the problem, in Unicode scalars.
    public let column: Int
    /// The 0-based byte offset of the problem.
    public let offset: Int
    /// What is wrong, in words; for syntax errors it ends with json-c's own description.
    public let reason: String

    /// An error at byte `offset` of `text`, locating its line and column.
    init(_ kind: Kind, at offset: Int, in text: UnsafeBufferPointer<UInt8>, reason: String) {
        let offset = min(max(offset, 0), text.count)
        self.kind = kind
        self.offset = offset
        self.reason = reason
        var line = 1
        var lineStart = 0
        for index in 0..<offset where text[index] == UInt8(ascii: "\n") {
            line += 1
            lineStart = index + 1
        }
        self.line = line
        self.column = text[lineStart..<offset].lazy.filter { $0 & 0xC0 != 0x80 }.count + 1
    }

    /// "line L, column C: reason".
    public var description: String { "line \(line), column \(column): \(reason)" }
}

extension JSONParseError {
    /// How to name the character at `offset` of `text` in a message: `'}'`,
    /// `"'"`, `U+000C`, `'é' (U+00E9)`, or "end of input".
    static func describeCharacter(at offset: Int, in text: UnsafeBufferPointer<UInt8>) -> String {
        guard offset < text.count else { return "end of input" }
        var end = offset + 1
        while end < text.count, text[end] & 0xC0 == 0x80, end - offset < 4 { end += 1 }
        let character = String(decoding: UnsafeBufferPointer(rebasing: text[offset..<end]), as: UTF8.self)
        guard let scalar = character.unicodeScalars.first else { return "end of input" }
        let hex = String(scalar.value, radix: 16, uppercase: true)
        let code = "U+" + String(repeating: "0", count: max(4 - hex.count, 0)) + hex
        if scalar == "'" { return "\"'\"" }
        if scalar.isASCII { return (0x20...0x7E).contains(scalar.value) ? "'\(character)'" : code }
        return "'\(character)' (\(code))"
    }
}
