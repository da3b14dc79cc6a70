import JSON

/// The JSON layer over json-c, as every control line, config file, ingest
/// line and state file reaches it.
///
/// Checks: text that is valid UTF-8 parses the same from a `String` as from
/// bytes; an accepted value serialises (compact and pretty) to text that
/// parses back to the same value.
enum JSONTarget {
    static let target = FuzzTarget(
        name: "json", summary: "JSON text: parse with each limit and policy, serialise, parse back",
        seeds: { seeds }, body: run)

    static func run(_ input: [UInt8]) throws(FuzzFinding) {
        var generator = InputDerivedGenerator(input)
        let options = JSONParseOptions(
            maxDepth: [64, 3, 0][generator.next(below: 3)], maxInputBytes: 1 << 20,
            largeIntegers: generator.next(below: 2) == 0 ? .reject : .double)
        let parsed: Result<JSON, JSONParseError> = Result { () throws(JSONParseError) in
            try JSON(parsing: input, options: options)
        }
        if let text = String(validating: input, as: UTF8.self) {
            let fromString = Result { () throws(JSONParseError) in try JSON(parsing: text, options: options) }
            try require(
                sameOutcome(parsed, fromString), "bytes gave \(parsed) but the same text as a String \(fromString)")
        }
        guard case .success(let value) = parsed else { return }
        for style in [JSONStyle.compact, .pretty] {
            let text = value.serialized(style)
            let again: JSON
            do {
                again = try JSON(
                    parsing: text,
                    options: JSONParseOptions(
                        maxDepth: options.maxDepth, maxInputBytes: 1 << 30, largeIntegers: .double))
            } catch {
                throw FuzzFinding("\(value) serialised as \(text), which does not parse: \(error)")
            }
            try require(again == value.withNULKeysReplaced, "\(value) serialised as \(text), which parses as \(again)")
        }
    }

    /// Same value, or an error of the same kind at the same place.
    private static func sameOutcome(_ a: Result<JSON, JSONParseError>, _ b: Result<JSON, JSONParseError>) -> Bool {
        switch (a, b) {
        case (.success(let x), .success(let y)): x == y
        case (.failure(let x), .failure(let y)): x.kind == y.kind && x.offset == y.offset
        default: false
        }
    }

    static let seeds: [[UInt8]] = [
        #"{"jsonrpc":"2.0","id":1,"method":"agent.status","params":{}}"#,
        #"[1, -0, 2.5, -1e-7, 1E+300, 9223372036854775807, -9223372036854775808, 18446744073709551616]"#,
        #"{"a":{"b":[true,false,null]},"a":"dup","\u0000":"\ud83d\ude00","esc":"\"\\\/\b\f\n\r\t"}"#,
        #"  "plain string with é and 𝄞"  "#,
        "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
        "{\"version\":1,\"role\":\"central\",\"backend\":\"sim\"}\n",
        "\u{EF}\u{BB}\u{BF}{}",
        "1.0e",
        "{\"unterminated",
        "nul\0l",
    ].map(\.bytes)
}

extension JSON {
    /// The value as it serialises: json-c keys are C strings, so a NUL in a
    /// key is written as U+FFFD (``JSON/serialized(_:)``).
    fileprivate var withNULKeysReplaced: JSON {
        switch self {
        case .array(let elements): return .array(elements.map(\.withNULKeysReplaced))
        case .object(let object):
            return .object(
                JSONObject(
                    object.keys.map { key in
                        (key.replacingNULs, object[key]!.withNULKeysReplaced)
                    }))
        default: return self
        }
    }
}

extension String {
    fileprivate var replacingNULs: String {
        String(String.UnicodeScalarView(unicodeScalars.map { $0 == "\0" ? "\u{FFFD}" : $0 }))
    }
}
