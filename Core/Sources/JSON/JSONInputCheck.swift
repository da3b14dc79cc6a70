/// Checks made on the raw bytes before json-c sees them: json-c treats a NUL
/// byte as the end of its input and accepts some invalid UTF-8 (encoded
/// surrogates, overlong forms, code points above U+10FFFF), so both are
/// located here, with their offsets.
enum JSONInputCheck {
    /// The first raw NUL byte, or, if `validateUTF8`, the first byte of an
    /// invalid UTF-8 sequence (Unicode 15, table 3-7), whichever comes first.
    static func firstProblem(in text: UnsafeBufferPointer<UInt8>, validateUTF8: Bool) -> JSONParseError? {
        var index = 0
        while index < text.count {
            let lead = text[index]
            if lead == 0 {
                return JSONParseError(
                    .nulByte, at: index, in: text,
                    reason: "NUL byte in the input (JSON text never contains one; write \\u0000 inside a string)")
            }
            if lead < 0x80 || !validateUTF8 {
                index += 1
                continue
            }
            let length = sequenceLength(in: text, at: index)
            guard length > 0 else {
                let byte = String(lead, radix: 16, uppercase: true)
                return JSONParseError(
                    .invalidUTF8, at: index, in: text, reason: "invalid UTF-8 sequence starting with byte 0x\(byte)")
            }
            index += length
        }
        return nil
    }

    /// The length of the well-formed multi-byte sequence at `index`, or 0.
    private static func sequenceLength(in text: UnsafeBufferPointer<UInt8>, at index: Int) -> Int {
        let lead = text[index]
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: (length, secondRange) = (3, 0xA0...0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: (length, secondRange) = (3, 0x80...0x9F)
        case 0xF0: (length, secondRange) = (4, 0x90...0xBF)
        case 0xF1...0xF3: length = 4
        case 0xF4: (length, secondRange) = (4, 0x80...0x8F)
        default: return 0
        }
        guard index + length <= text.count, secondRange.contains(text[index + 1]) else { return 0 }
        for next in (index + 2)..<(index + length) where !(0x80...0xBF).contains(text[next]) { return 0 }
        return length
    }
}
