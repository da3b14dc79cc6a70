/// Makes text safe for a line-oriented log: every control character (C0,
/// DEL, C1), the Unicode line and paragraph separators and the bidirectional
/// overrides are written as escapes (`\n`, `\t`, `\r`, `\x1b`, `\u{2028}`),
/// so a string from outside (a client's reference, a device name, an ingest
/// line, a config key) can neither start a forged line nor hide or reorder
/// text on a terminal.
public enum LogText {
    /// `text` with its unsafe characters escaped; unchanged when it has none.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            guard isUnsafe(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                let hex = String(scalar.value, radix: 16)
                result += scalar.value < 0x100 ? "\\x" + (hex.count < 2 ? "0" : "") + hex : "\\u{\(hex)}"
            }
        }
        return result
    }

    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
