/// Decodes the body of a JSON string literal (the bytes between its quotes,
/// already checked by json-c and the audit) into its text, so two spellings
/// of one key (`"a"`, `"\u0061"`) compare equal. A lone surrogate becomes
/// U+FFFD.
enum JSONStringDecoder {
    static func decode(_ body: Slice<UnsafeBufferPointer<UInt8>>) -> String {
        guard body.contains(UInt8(ascii: "\\")) else {
            return String(decoding: UnsafeBufferPointer(rebasing: body), as: UTF8.self)
        }
        var scalars = String.UnicodeScalarView()
        var bytes: [UInt8] = []
        func flushBytes() {
            scalars.append(contentsOf: String(decoding: bytes, as: UTF8.self).unicodeScalars)
            bytes.removeAll(keepingCapacity: true)
        }
        var index = body.startIndex
        var pendingHigh: UInt32?
        while index < body.endIndex {
            let byte = body[index]
            guard byte == UInt8(ascii: "\\"), index + 1 < body.endIndex else {
                if pendingHigh != nil {
                    scalars.append("\u{FFFD}")
                    pendingHigh = nil
                }
                bytes.append(byte)
                index += 1
                continue
            }
            flushBytes()
            let escape = body[index + 1]
            index += 2
            guard escape == UInt8(ascii: "u") else {
                if pendingHigh != nil {
                    scalars.append("\u{FFFD}")
                    pendingHigh = nil
                }
                scalars.append(Self.simpleEscape(escape))
                continue
            }
            let code = hexValue(body, at: index)
            index += 4
            switch code {
            case 0xD800...0xDBFF:
                if pendingHigh != nil { scalars.append("\u{FFFD}") }
                pendingHigh = code
            case 0xDC00...0xDFFF:
                if let high = pendingHigh,
                    let scalar = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00))
                {
                    scalars.append(scalar)
                } else {
                    scalars.append("\u{FFFD}")
                }
                pendingHigh = nil
            default:
                if pendingHigh != nil { scalars.append("\u{FFFD}") }
                pendingHigh = nil
                scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
            }
        }
        if pendingHigh != nil { scalars.append("\u{FFFD}") }
        flushBytes()
        return String(scalars)
    }

    private static func simpleEscape(_ escape: UInt8) -> Unicode.Scalar {
        switch escape {
        case UInt8(ascii: "b"): "\u{8}"
        case UInt8(ascii: "f"): "\u{C}"
        case UInt8(ascii: "n"): "\n"
        case UInt8(ascii: "r"): "\r"
        case UInt8(ascii: "t"): "\t"
        default: Unicode.Scalar(escape)  // \" \\ \/
        }
    }

    /// The four hex digits at `index` (fewer at the end count as zero).
    private static func hexValue(_ body: Slice<UnsafeBufferPointer<UInt8>>, at index: Int) -> UInt32 {
        var value: UInt32 = 0
        for offset in 0..<4 {
            let position = index + offset
            let digit = position < body.endIndex ? body[position] : UInt8(ascii: "0")
            let nibble: UInt8 =
                switch digit {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
                default: 0
                }
            value = value << 4 | UInt32(nibble)
        }
        return value
    }
}
