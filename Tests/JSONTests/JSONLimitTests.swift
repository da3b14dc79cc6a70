import JSON
import Testing

@Suite("Depth, size and number-range limits")
struct JSONLimitTests {
    @Test("The default depth limit of 64 accepts 64 nested arrays and rejects 65 at the 65th bracket")
    func defaultDepth() throws {
        #expect(JSONParseOptions().maxDepth == 64)
        #expect(try JSON(parsing: nestedArrays(64, around: "1")).serialized() == nestedArrays(64, around: "1"))
        expectParseError(
            nestedArrays(65, around: "1"), kind: .depthLimitExceeded(limit: 64), line: 1, column: 65,
            reason: "arrays and objects nest deeper than the limit of 64 (JSONParseOptions.maxDepth)")
    }

    @Test("An empty innermost container counts as a level too (json-c alone would accept one more)")
    func emptyInnermost() {
        expectParseError(
            nestedArrays(3), options: JSONParseOptions(maxDepth: 2), kind: .depthLimitExceeded(limit: 2), line: 1,
            column: 3, reason: "arrays and objects nest deeper than the limit of 2 (JSONParseOptions.maxDepth)")
        expectParseError(
            #"{"a": {"b": {}}}"#, options: JSONParseOptions(maxDepth: 2), kind: .depthLimitExceeded(limit: 2),
            line: 1, column: 13,
            reason: "arrays and objects nest deeper than the limit of 2 (JSONParseOptions.maxDepth)")
    }

    @Test("The depth limit is per parse: depth 2 allows [[1]] and {\"a\":[1]}")
    func customDepth() throws {
        let options = JSONParseOptions(maxDepth: 2)
        #expect(try JSON(parsing: "[[1]]", options: options) == [[1]])
        #expect(try JSON(parsing: #"{"a":[1]}"#, options: options) == ["a": [1]])
        #expect(throws: JSONParseError.self) { try JSON(parsing: "[[[1]]]", options: options) }
    }

    @Test("Depth 0 allows only scalars")
    func depthZero() throws {
        let options = JSONParseOptions(maxDepth: 0)
        #expect(try JSON(parsing: "\"[not an array]\"", options: options) == "[not an array]")
        expectParseError(
            "[]", options: options, kind: .depthLimitExceeded(limit: 0), line: 1, column: 1,
            reason: "arrays and objects nest deeper than the limit of 0 (JSONParseOptions.maxDepth)")
    }

    @Test("Brackets inside strings do not count toward depth")
    func bracketsInStrings() throws {
        let options = JSONParseOptions(maxDepth: 1)
        #expect(try JSON(parsing: #"["[[[{{{", "\"[["]"#, options: options) == ["[[[{{{", "\"[["])
    }

    @Test("1000 levels, the ceiling, parse and serialise on a test task's stack; larger limits act as 1000")
    func ceiling() throws {
        #expect(JSONParseOptions.maxDepthCeiling == 1_000)
        let options = JSONParseOptions(maxDepth: 5_000)
        let deep = try JSON(parsing: nestedArrays(1_000, around: "\"deep\""), options: options)
        #expect(deep.serialized() == nestedArrays(1_000, around: "\"deep\""))
        let error = #expect(throws: JSONParseError.self) {
            try JSON(parsing: nestedArrays(1_001), options: options)
        }
        #expect(error?.kind == .depthLimitExceeded(limit: 1_000))
        #expect(error?.column == 1_001)
    }

    @Test("The size limit accepts exactly maxInputBytes and rejects one byte more, naming size and limit")
    func sizeLimit() throws {
        let options = JSONParseOptions(maxInputBytes: 10)
        #expect(try JSON(parsing: "\"12345678\"", options: options) == "12345678")
        expectParseError(
            "\"123456789\"", options: options, kind: .sizeLimitExceeded(size: 11, limit: 10), line: 1, column: 11,
            reason: "input is 11 bytes, more than the limit of 10 bytes (JSONParseOptions.maxInputBytes)")
    }

    @Test("The default size limit is 1 MiB, counted in UTF-8 bytes")
    func defaultSizeLimit() throws {
        #expect(JSONParseOptions().maxInputBytes == 1 << 20)
        let fits = "\"" + String(repeating: "é", count: (1 << 19) - 1) + "\""
        #expect(fits.utf8.count == 1 << 20)
        #expect(try JSON(parsing: fits).stringValue?.count == (1 << 19) - 1)
        let error = #expect(throws: JSONParseError.self) { try JSON(parsing: fits + " ") }
        #expect(error?.kind == .sizeLimitExceeded(size: (1 << 20) + 1, limit: 1 << 20))
    }

    @Test(
        "Integers outside Int64 are rejected by default with their position",
        arguments: [
            "9223372036854775808", "-9223372036854775809", "18446744073709551615", "18446744073709551616",
            "123456789012345678901234567890",
        ])
    func largeIntegersRejected(text: String) {
        expectParseError(
            "[0,\n \(text)]", kind: .numberOutOfRange, line: 2, column: 2,
            reason: "integer \(text) is outside the range of Int64 (-9223372036854775808...9223372036854775807);"
                + " JSONParseOptions.largeIntegers is .reject")
    }

    @Test("The Int64 bounds themselves are integers")
    func int64Bounds() throws {
        #expect(try JSON(parsing: "[9223372036854775807, -9223372036854775808]") == [.int(.max), .int(.min)])
    }

    @Test("Under .double, integers outside Int64 become the nearest Double instead of json-c's clamped value")
    func largeIntegersAsDoubles() throws {
        let options = JSONParseOptions(largeIntegers: .double)
        let value = try JSON(
            parsing: #"{"a": 18446744073709551616, "b": [-9223372036854775809, 1], "c": 9223372036854775808}"#,
            options: options)
        // 2^64 and ±2^63 are the nearest doubles; json-c alone would give UInt64.max and Int64.min.
        let expected: JSON = ["a": .double(0x1p64), "b": [.double(-0x1p63), 1], "c": .double(0x1p63)]
        #expect(value == expected)
        #expect(try JSON(parsing: "1" + String(repeating: "0", count: 30), options: options) == .double(1e30))
    }

    @Test("Numbers too large for a Double are rejected rather than read as infinity")
    func doubleOverflow() {
        expectParseError(
            "[1e400]", kind: .numberOutOfRange, line: 1, column: 2,
            reason: "number 1e400 is too large for a Double (its magnitude is above 1.7976931348623157e+308)")
        expectParseError(
            "-1.5E+999", kind: .numberOutOfRange, line: 1, column: 1,
            reason: "number -1.5E+999 is too large for a Double (its magnitude is above 1.7976931348623157e+308)")
    }
}
