import JSON
import Testing

@Suite("Duplicate keys and byte order marks")
struct JSONDuplicateKeyTests {
    @Test("A repeated key is rejected by default, at its second occurrence, naming the key")
    func rejectedByDefault() {
        expectParseError(
            #"{"method":"agent.status","method":"agent.shutdown"}"#, kind: .duplicateKey, line: 1, column: 26,
            reason: #"duplicate key "method" in an object (each key may appear once; JSONParseOptions.duplicateKeys)"#)
    }

    @Test("Keys are compared after decoding escapes: \\u0061 repeats a")
    func comparedDecoded() {
        expectParseError(
            #"{"a":1,"\u0061":2}"#, kind: .duplicateKey, line: 1, column: 8,
            reason: #"duplicate key "a" in an object (each key may appear once; JSONParseOptions.duplicateKeys)"#)
        expectParseError(
            #"{"\ud83d\ude00":1,"😀":2}"#, kind: .duplicateKey, line: 1, column: 19,
            reason: #"duplicate key "😀" in an object (each key may appear once; JSONParseOptions.duplicateKeys)"#)
    }

    @Test("Nested objects are checked on their own: the same key in sibling and nested objects is fine")
    func scopes() throws {
        let value = try JSON(parsing: #"{"a":{"a":1,"b":{"a":2}},"b":[{"a":1},{"a":2}],"c":"a"}"#)
        #expect(value["b"]?[1]?["a"] == 2)
        expectParseError(
            "{\"x\":[{\"k\":1}],\n \"y\":{\"k\":1,\"k\":2}}", kind: .duplicateKey, line: 2, column: 13,
            reason: #"duplicate key "k" in an object (each key may appear once; JSONParseOptions.duplicateKeys)"#)
    }

    @Test("A repeated key comes before a later syntax error (problems in text order)")
    func beforeLaterSyntaxError() {
        expectParseError(
            #"{"a":1,"a":2,}"#, kind: .duplicateKey, line: 1, column: 8,
            reason: #"duplicate key "a" in an object (each key may appear once; JSONParseOptions.duplicateKeys)"#)
    }

    @Test("A very long repeated key is cut short in the message")
    func longKey() throws {
        let key = String(repeating: "k", count: 500)
        let error = #expect(throws: JSONParseError.self) { try JSON(parsing: "{\"\(key)\":1,\"\(key)\":2}") }
        #expect(error?.kind == .duplicateKey)
        #expect((error?.reason.count ?? 0) < 200)
    }

    @Test("A UTF-8 byte order mark at the start gets its own message, not 'invalid UTF-8'")
    func byteOrderMark() {
        let text: [UInt8] = [0xEF, 0xBB, 0xBF] + Array(#"{"version":1}"#.utf8)
        expectParseError(
            text, kind: .byteOrderMark, line: 1, column: 1,
            reason: "the text starts with a UTF-8 byte order mark (U+FEFF), which JSON does not allow;"
                + " save it as UTF-8 without a BOM")
        expectParseError(
            "\u{FEFF}[1]", kind: .byteOrderMark, line: 1, column: 1,
            reason: "the text starts with a UTF-8 byte order mark (U+FEFF), which JSON does not allow;"
                + " save it as UTF-8 without a BOM")
    }
}
