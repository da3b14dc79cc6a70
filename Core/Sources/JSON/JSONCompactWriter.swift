/// Writes a value as compact JSON text straight into bytes: the text json-c writes for it with
/// `JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE`, byte for byte, without building a json-c tree.
///
/// Every reply and event line of the control API goes through here, so the value is walked once and nothing is
/// allocated per member (json-c allocates an object per value, a hash table per object and a copy of each key,
/// then formats each number through `printf`). The layout follows json-c's: no spaces; `"`, `\` and the control
/// characters U+0000–U+001F are escaped (`\b \f \n \r \t` by name, the others as `\u00xx` in lower-case hex),
/// "/" and everything else, U+007F included, is written as it is; integers in decimal; doubles as Swift's
/// shortest round-trip text (the same text ``CJSONRoot`` hands json-c); non-finite doubles as `null`. Object keys
/// are C strings to json-c: a key holding U+0000 is written with U+FFFD in its place, and when that makes two
/// keys equal, the member keeps the first one's position and the last one's value, as json-c's table does.
struct JSONCompactWriter {
    /// The text written so far.
    var bytes: [UInt8]

    /// A writer whose text starts with `bytes`.
    init(appendingTo bytes: [UInt8] = []) {
        self.bytes = bytes
    }

    /// Appends the compact text of `value`.
    mutating func write(_ value: JSON) {
        switch value {
        case .null: append("null")
        case .bool(let flag): append(flag ? "true" : "false")
        case .int(let number): write(number)
        case .double(let number):
            if number.isFinite { append(number.description) } else { append("null") }
        case .string(let text): write(string: text)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                write(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            if members.contains(where: { $0.key.utf8.contains(0) }) {
                writeMembers(Self.cKeyed(members))
            } else {
                writeMembers(members)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    private mutating func writeMembers<Members: Sequence>(_ members: Members)
    where Members.Element == (key: String, value: JSON) {
        var first = true
        for (key, value) in members {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            write(string: key)
            bytes.append(UInt8(ascii: ":"))
            write(value)
        }
    }

    /// The members as json-c stores them: U+0000 in a key replaced by U+FFFD, then a key that repeats an earlier
    /// one replacing that member's value in place.
    private static func cKeyed(_ members: JSONObject) -> [(key: String, value: JSON)] {
        var result: [(key: String, value: JSON)] = []
        var positions: [String: Int] = [:]
        for (key, value) in members {
            let cKey = CJSONRoot.cKey(key)
            if let position = positions[cKey] {
                result[position].value = value
            } else {
                positions[cKey] = result.count
                result.append((cKey, value))
            }
        }
        return result
    }

    /// Appends `number` in decimal.
    private mutating func write(_ number: Int64) {
        if number < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = number.magnitude  // unsigned, so Int64.min has one too
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in  // UInt64.max has 20 digits
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: digits[start...])
        }
    }

    /// Appends `text` quoted and escaped.
    private mutating func write(string text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var runStart = 0
            for (index, byte) in utf8.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == 0x5C {
                bytes.append(contentsOf: utf8[runStart..<index])
                runStart = index + 1
                appendEscape(for: byte)
            }
            bytes.append(contentsOf: utf8[runStart...])
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func appendEscape(for byte: UInt8) {
        bytes.append(0x5C)  // backslash
        switch byte {
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case UInt8(ascii: "\""), 0x5C: bytes.append(byte)
        default:
            let hex: StaticString = "0123456789abcdef"
            hex.withUTF8Buffer { digits in
                bytes.append(UInt8(ascii: "u"))
                bytes.append(UInt8(ascii: "0"))
                bytes.append(UInt8(ascii: "0"))
                bytes.append(digits[Int(byte >> 4)])
                bytes.append(digits[Int(byte & 0xF)])
            }
        }
    }

    private mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    private mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }
}
