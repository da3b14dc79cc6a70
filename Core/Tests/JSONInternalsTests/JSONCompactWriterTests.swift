import Testing

@testable import JSON

/// The compact writer must write exactly what json-c writes (`JSON_C_TO_STRING_PLAIN |
/// JSON_C_TO_STRING_NOSLASHESCAPE`) for the same value: json-c, through ``CJSONRoot``, is the reference here.
@Suite struct JSONCompactWriterTests {
    private func written(_ value: JSON) -> String {
        var writer = JSONCompactWriter()
        writer.write(value)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    private func byJSONC(_ value: JSON) -> String {
        CJSONRoot(building: value).serialized(pretty: false)
    }

    @Test("Every ASCII character, alone and inside text, is written as json-c writes it")
    func everyASCIICharacter() {
        for code in UInt8(0)...0x7F {
            let character = String(decoding: [code], as: UTF8.self)
            for value: JSON in [.string(character), .string("a\(character)b"), [character: .string(character)]] {
                #expect(written(value) == byJSONC(value), "U+\(String(code, radix: 16))")
            }
        }
    }

    @Test("Non-ASCII text is written as UTF-8, as json-c writes it")
    func unicode() {
        for text in ["é", "ü\u{7F}ß", "😀 and \u{2028}\u{2029}", "\u{FFFD}", "日本語/テキスト", "a\u{0}\u{80}\u{10FFFF}"] {
            let value: JSON = ["text": .string(text), text: [.string(text)]]
            #expect(written(value) == byJSONC(value))
        }
    }

    @Test("Integers at the bounds, doubles of every kind and the literals match json-c")
    func numbers() {
        let integers: [Int64] = [0, 1, -1, 9, 10, -10, 99, 12_345, Int64(Int32.max) + 1, .max, .min, .min + 1]
        let doubles: [Double] = [
            0, -0.0, 1, -1.5, 0.1, 1e20, 1e21, 1e-7, 123_456_789.125, .pi, .leastNonzeroMagnitude,
            .greatestFiniteMagnitude, .nan, .infinity, -.infinity,
        ]
        let value = JSON.array(integers.map(JSON.int) + doubles.map(JSON.double) + [.null, true, false])
        #expect(written(value) == byJSONC(value))
    }

    @Test("Empty containers and deep nesting match json-c")
    func containers() {
        var deep: JSON = ["leaf": []]
        for level in 0..<200 { deep = level % 2 == 0 ? [deep, [:]] : ["k\(level)": deep] }
        for value: JSON in [[], [:], [[]], [[:]], ["": [:]], deep] {
            #expect(written(value) == byJSONC(value))
        }
    }

    @Test("A key holding U+0000 is written with U+FFFD; one that then equals an earlier key replaces its value")
    func keysWithNUL() {
        let value: JSON = .object(JSONObject([("a\0", 1), ("b", 2), ("a\u{FFFD}", 3), ("\0\0", 4), ("\u{FFFD}\0", 5)]))
        #expect(written(value) == byJSONC(value))
        #expect(written(value) == "{\"a\u{FFFD}\":3,\"b\":2,\"\u{FFFD}\u{FFFD}\":5}")
    }

    @Test("Two thousand generated documents are written as json-c writes them")
    func generatedDocuments() {
        var generator = Generator(seed: 0x5EED)
        for _ in 0..<2000 {
            let value = generator.value(depth: 4)
            #expect(written(value) == byJSONC(value))
        }
    }
}

/// Arbitrary JSON values from a fixed seed (xorshift), so a failure repeats.
private struct Generator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }

    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    mutating func text() -> String {
        let pieces: [String] = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\u{1}", "\u{1F}", "\u{7F}", "é", "😀", "\0"]
        return (0..<below(8)).map { _ in pieces[below(pieces.count)] }.joined()
    }

    mutating func value(depth: Int) -> JSON {
        switch below(depth > 0 ? 8 : 6) {
        case 0: return .null
        case 1: return .bool(next() & 1 == 0)
        case 2: return .int(Int64(bitPattern: next()) >> Int64(below(64)))
        case 3: return .double(Double(bitPattern: next()))
        case 4: return .double(Double(below(1_000_000)) / 64)
        case 5: return .string(text())
        case 6: return .array((0..<below(5)).map { _ in value(depth: depth - 1) })
        default: return .object(JSONObject((0..<below(5)).map { _ in (text(), value(depth: depth - 1)) }))
        }
    }
}
