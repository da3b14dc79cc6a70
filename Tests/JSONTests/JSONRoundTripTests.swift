import JSON
import Testing

@Suite("Parsing and serialising round trips")
struct JSONRoundTripTests {
    @Test("Every kind of value parses to its case")
    func kinds() throws {
        #expect(try JSON(parsing: "null") == .null)
        #expect(try JSON(parsing: "true") == .bool(true))
        #expect(try JSON(parsing: "false") == .bool(false))
        #expect(try JSON(parsing: "42") == .int(42))
        #expect(try JSON(parsing: "-7") == .int(-7))
        #expect(try JSON(parsing: "1.5") == .double(1.5))
        #expect(try JSON(parsing: "\"hi\"") == .string("hi"))
        #expect(try JSON(parsing: "[]") == .array([]))
        #expect(try JSON(parsing: "{}") == .object(JSONObject()))
        #expect(try JSON(parsing: " \t\r\n[1] \n") == .array([.int(1)]))
    }

    @Test("A document with every kind serialises compactly and reads back equal")
    func document() throws {
        let text =
            #"{"id":7,"ok":true,"none":null,"ratio":0.25,"name":"bleagent","list":[1,-2,[],{}],"nested":{"x":{"y":[false]}}}"#
        let value = try JSON(parsing: text)
        #expect(value.serialized() == text)
        #expect(try JSON(parsing: value.serialized()) == value)
        #expect(try JSON(parsing: value.serialized(.pretty)) == value)
    }

    @Test("Pretty output indents by two spaces with a space after each colon")
    func pretty() throws {
        let value: JSON = ["name": "a/b", "list": [1, 2.5], "empty": []]
        #expect(
            value.serialized(.pretty) == """
                {
                  "name": "a/b",
                  "list": [
                    1,
                    2.5
                  ],
                  "empty": [
                  ]
                }
                """)
    }

    @Test("Integers keep their exact value across the whole Int64 range")
    func integers() throws {
        for number: Int64 in [0, 1, -1, (1 << 53) + 1, .max, .min, -(1 << 62)] {
            let text = JSON.int(number).serialized()
            #expect(text == String(number))
            #expect(try JSON(parsing: text) == .int(number))
        }
    }

    @Test("Doubles are written in the shortest form that reads back identically, and stay doubles")
    func doublesShortest() throws {
        let expected: [(Double, String)] = [
            (1.5, "1.5"), (2.0, "2.0"), (0.1, "0.1"), (-0.0, "-0.0"), (1e20, "1e+20"), (1e-7, "1e-07"),
            (123456.789, "123456.789"), (.leastNonzeroMagnitude, "5e-324"),
            (.greatestFiniteMagnitude, "1.7976931348623157e+308"),
        ]
        for (number, text) in expected {
            #expect(JSON.double(number).serialized() == text)
            let back = try JSON(parsing: text)
            #expect(back.doubleValue?.bitPattern == number.bitPattern, "\(text)")
            #expect(back.intValue == nil, "\(text) must stay a double")
        }
        #expect(try JSON(parsing: "1E5") == .double(100_000))
        #expect(try JSON(parsing: "0.5e-3") == .double(0.0005))
        #expect(try JSON(parsing: "1e-400") == .double(0))
    }

    @Test("Ten thousand doubles from arbitrary bit patterns round-trip bit for bit")
    func doublesBitPatterns() throws {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var checked = 0
        while checked < 10_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let number = Double(bitPattern: state)
            guard number.isFinite else { continue }
            let back = try JSON(parsing: JSON.double(number).serialized())
            #expect(back.doubleValue?.bitPattern == number.bitPattern)
            checked += 1
        }
    }

    @Test("Non-finite doubles, which JSON cannot express, are written as null")
    func nonFinite() {
        #expect(JSON.double(.nan).serialized() == "null")
        #expect(JSON.array([.double(.infinity), .double(-.infinity)]).serialized() == "[null,null]")
    }

    @Test("Unicode text round-trips unescaped; escapes in input are decoded")
    func unicode() throws {
        let text = "héllo wörld 中文 😀 \u{2028} \u{7F}"
        #expect(JSON.string(text).serialized() == "\"\(text)\"")
        #expect(try JSON(parsing: JSON.string(text).serialized()) == .string(text))
        #expect(try JSON(parsing: #""\u00e9\u4E2D\ud83d\ude00""#) == .string("é中😀"))
    }

    @Test("Quotes, backslashes and control characters are escaped; slashes are not")
    func escapes() throws {
        let text = "q\" b\\ s/ \u{8}\u{C}\n\r\t \u{1}\u{1F}"
        let written = JSON.string(text).serialized()
        #expect(written == #""q\" b\\ s/ \b\f\n\r\t \u0001\u001f""#)
        #expect(try JSON(parsing: written) == .string(text))
        #expect(try JSON(parsing: #""a\/b""#) == .string("a/b"))
    }

    @Test("Compact output never contains a raw line break, so it can be one JSON Lines record")
    func compactIsOneLine() {
        let value: JSON = ["text": "line one\nline two\r\n", "list": ["\n"], "key\nwith newline": 1]
        #expect(!value.serialized().contains("\n"))
        #expect(!value.serialized().contains("\r"))
    }

    @Test("U+0000 inside string values is kept, written as \\u0000")
    func nulInStrings() throws {
        #expect(try JSON(parsing: #"["a\u0000b"]"#) == ["a\0b"])
        #expect(JSON.string("a\0b").serialized() == #""a\u0000b""#)
    }

    @Test("An object key containing U+0000 is written with U+FFFD, because json-c keys are C strings")
    func nulInKeysWritten() {
        let value: JSON = ["a\0b": 1]
        #expect(value.serialized() == "{\"a\u{FFFD}b\":1}")
    }

    @Test("An unpaired surrogate escape becomes U+FFFD (json-c's replacement)")
    func loneSurrogate() throws {
        #expect(try JSON(parsing: #""\ud800x""#) == .string("\u{FFFD}x"))
        #expect(try JSON(parsing: #""\udc00""#) == .string("\u{FFFD}"))
    }

    @Test("Parsing from UTF-8 bytes gives the same value as from a String")
    func bytes() throws {
        let text = #"{"é":[1,"ü"]}"#
        #expect(try JSON(parsing: Array(text.utf8)) == JSON(parsing: text))
        #expect(try JSON(parsing: text.utf8[...]) == JSON(parsing: text))
    }

    @Test("description is the compact serialisation")
    func description() {
        let value: JSON = ["a": [1, "x"]]
        #expect("\(value)" == #"{"a":[1,"x"]}"#)
        #expect(value.objectValue?.description == #"{"a":[1,"x"]}"#)
    }
    @Test("A value holding a large array is written as its pieces are, and reads back equal")
    func largeArraysPieceByPiece() throws {
        let rows: [JSON] = (0..<1000).map { index in
            [
                "id": .string("dev-\(index)"), "name": index % 3 == 0 ? .null : .string("n\"\\/\n\u{7}é\(index)"),
                "rssi": .int(Int64(-index)), "ratio": .double(Double(index) / 7), "flags": [true, false, [:], []],
            ]
        }
        let array = JSON.array(rows)
        #expect(array.serialized() == "[" + rows.map { $0.serialized() }.joined(separator: ",") + "]")
        let keyWithNUL = "odd\"key\u{0}"
        let reply: JSON = ["jsonrpc": "2.0", "id": 7, "result": ["devices": array, keyWithNUL: [1, 2]]]
        let small: JSON = [keyWithNUL: [1, 2]]
        let smallText = small.serialized()
        let expected =
            #"{"jsonrpc":"2.0","id":7,"result":{"devices":"# + array.serialized() + "," + smallText.dropFirst()
            + "}"
        #expect(reply.serialized() == expected)
        #expect(try JSON(parsing: array.serialized()) == array)
        #expect(try JSON(parsing: array.serialized(.pretty)) == array)
        for value in [reply, small, array, .string("é\n")] {
            #expect(value.serializedLine() == Array((value.serialized() + "\n").utf8), "one JSON Lines record")
        }
    }
}
