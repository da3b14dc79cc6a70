import JSON
import Testing

@Suite("Parse errors: kind, line, column and reason")
struct JSONParseErrorTests {
    @Test("A missing value on line 2 is reported at its line and column with json-c's description")
    func missingValue() {
        expectParseError(
            "{\"a\": 1,\n  \"b\": }", kind: .syntax, line: 2, column: 8,
            reason: "unexpected '}' (json-c: unexpected character)")
    }

    @Test("The description reads 'line L, column C: reason'")
    func description() throws {
        let error = #expect(throws: JSONParseError.self) { try JSON(parsing: "[1 2]") }
        #expect(error?.description == "line 1, column 4: unexpected '2' (json-c: array value separator ',' expected)")
        #expect(error?.offset == 3)
    }

    @Test("Columns count Unicode scalars, not bytes; offsets count bytes")
    func columnsCountScalars() throws {
        let error = #expect(throws: JSONParseError.self) { try JSON(parsing: "[\"é😀\",\n \"ü\", x]") }
        #expect(error?.line == 2)
        #expect(error?.column == 7)
        #expect(error?.offset == 18)
    }

    @Test("Empty and whitespace-only input is its own kind")
    func empty() {
        expectParseError("", kind: .emptyInput, line: 1, column: 1, reason: "empty input: expected a JSON value")
        expectParseError(" \n\t", kind: .emptyInput, line: 2, column: 2, reason: "empty input: expected a JSON value")
    }

    @Test(
        "Truncated input is reported at its end", arguments: ["[1,", "{\"a\":", "\"abc", "tru", "[1.5", "-", "{\"a\""])
    func truncated(text: String) {
        expectParseError(
            text, kind: .unexpectedEnd, line: 1, column: text.count + 1,
            reason: "unexpected end of input (json-c: unexpected end of data)")
    }

    @Test("Anything but whitespace after the value is rejected at its position")
    func trailingData() {
        expectParseError(
            "[1] x", kind: .trailingData, line: 1, column: 5, reason: "unexpected 'x' after the JSON value")
        expectParseError("1 2", kind: .trailingData, line: 1, column: 3, reason: "unexpected '2' after the JSON value")
        expectParseError(
            "{}\n}", kind: .trailingData, line: 2, column: 1, reason: "unexpected '}' after the JSON value")
        expectParseError(
            "truex", kind: .trailingData, line: 1, column: 5, reason: "unexpected 'x' after the JSON value")
        expectParseError(
            "[1]\u{C}", kind: .trailingData, line: 1, column: 4, reason: "unexpected U+000C after the JSON value")
    }

    @Test("json-c's errors keep its wording after ours")
    func jsonCErrors() {
        expectParseError(
            "{\"a\" 1}", kind: .syntax, line: 1, column: 6,
            reason: "unexpected '1' (json-c: object property name separator ':' expected)")
        expectParseError(
            "{1:2}", kind: .syntax, line: 1, column: 2,
            reason: "unexpected '1' (json-c: quoted object property name expected)")
        expectParseError(
            "[tru]", kind: .syntax, line: 1, column: 5, reason: "unexpected ']' (json-c: boolean expected)")
        expectParseError(
            "\"\\x\"", kind: .syntax, line: 1, column: 3, reason: "unexpected 'x' (json-c: invalid string sequence)")
        expectParseError(
            "[1,]", kind: .syntax, line: 1, column: 4, reason: "unexpected ']' (json-c: unexpected character)")
        expectParseError(
            "'a'", kind: .syntax, line: 1, column: 1, reason: "unexpected \"'\" (json-c: unexpected character)")
        expectParseError(
            "/* no */ 1", kind: .syntax, line: 1, column: 1, reason: "unexpected '/' (json-c: unexpected character)")
    }

    @Test("Numbers json-c's strict mode accepts but JSON forbids are rejected")
    func laxNumbers() {
        expectParseError(
            "-01", kind: .syntax, line: 1, column: 1, reason: "invalid number '-01': leading zeros are not allowed")
        expectParseError(
            "01", kind: .syntax, line: 1, column: 1, reason: "invalid number '01': leading zeros are not allowed")
        expectParseError(
            "[00]", kind: .syntax, line: 1, column: 2, reason: "invalid number '00': leading zeros are not allowed")
        expectParseError(
            "[1.]", kind: .syntax, line: 1, column: 2,
            reason: "invalid number '1.': a '.' must be followed by digits")
        expectParseError(
            "[1.e5]", kind: .syntax, line: 1, column: 2,
            reason: "invalid number '1.e5': a '.' must be followed by digits")
        expectParseError(
            "NaN", kind: .syntax, line: 1, column: 1, reason: "'NaN' is not JSON: JSON numbers have no NaN or Infinity")
        expectParseError(
            "[1, -Infinity]", kind: .syntax, line: 1, column: 5,
            reason: "'-Infinity' is not JSON: JSON numbers have no NaN or Infinity")
    }

    @Test("A problem json-c let through is reported before json-c's own later error")
    func firstProblemFirst() {
        expectParseError(
            "[01, }", kind: .syntax, line: 1, column: 2, reason: "invalid number '01': leading zeros are not allowed")
    }

    @Test("Raw control characters in strings and non-JSON whitespace are rejected")
    func controlCharacters() {
        expectParseError(
            "\"a\tb\"", kind: .syntax, line: 1, column: 3,
            reason: "control character U+0009 in a string must be written as an escape (such as \\n or \\u0009)")
        expectParseError(
            "[\"line\nbreak\"]", kind: .syntax, line: 1, column: 7,
            reason: "control character U+000A in a string must be written as an escape (such as \\n or \\u0009)")
        expectParseError(
            "\u{B}[1]", kind: .syntax, line: 1, column: 1, reason: "unexpected U+000B (json-c: unexpected character)")
    }

    @Test("Invalid UTF-8 is rejected at its first byte, including forms json-c accepts")
    func invalidUTF8() {
        let cases: [([UInt8], Int, String)] = [
            ([0x22, 0xFF, 0x22], 2, "0xFF"),  // never valid
            ([0x22, 0xC3, 0x22], 2, "0xC3"),  // truncated two-byte sequence
            ([0x5B, 0x22, 0xC3], 3, "0xC3"),  // truncated at end of input
            ([0x22, 0xC0, 0xAF, 0x22], 2, "0xC0"),  // overlong "/"
            ([0x22, 0xED, 0xA0, 0x80, 0x22], 2, "0xED"),  // encoded surrogate U+D800
            ([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], 2, "0xF4"),  // above U+10FFFF
            ([0x22, 0xC3, 0xA9, 0x80, 0x22], 3, "0x80"),  // stray continuation byte after "é"
        ]
        for (bytes, column, byte) in cases {
            expectParseError(
                bytes, kind: .invalidUTF8, line: 1, column: column,
                reason: "invalid UTF-8 sequence starting with byte \(byte)")
        }
        #expect(throws: Never.self) { try JSON(parsing: [0x22, 0xF0, 0x9F, 0x98, 0x80, 0x22] as [UInt8]) }
    }

    @Test("A raw NUL byte is rejected, from bytes and from a String")
    func nulByte() {
        let reason = "NUL byte in the input (JSON text never contains one; write \\u0000 inside a string)"
        expectParseError([0x5B, 0x31, 0x5D, 0x00], kind: .nulByte, line: 1, column: 4, reason: reason)
        expectParseError("\"a\u{0}b\"", kind: .nulByte, line: 1, column: 3, reason: reason)
        expectParseError("1\u{0}2", kind: .nulByte, line: 1, column: 2, reason: reason)
    }

    @Test("An object key containing \\u0000 is rejected, since json-c would cut it short")
    func nulInKey() {
        expectParseError(
            #"{"ok": "\u0000", "a\u0000b": 1}"#, kind: .unsupportedKey, line: 1, column: 20,
            reason: "object key contains \\u0000, which json-c cannot store (the key would be cut short)")
    }
}
