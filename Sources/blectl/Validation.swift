/// Checks of command-line values, done before anything is sent.
enum Validate {
    private static func isHex(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...70).contains(byte) || (97...102).contains(byte)
    }

    /// A device id (the UUID `central.devices` lists), lower-cased.
    static func device(_ text: String) throws(UsageError) -> String {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false).map(\.utf8.count)
        guard groups == [8, 4, 4, 4, 12], text.utf8.allSatisfy({ isHex($0) || $0 == UInt8(ascii: "-") }) else {
            throw UsageError("\"\(text)\" is not a device id (a UUID as `blectl devices` lists it)")
        }
        return text.lowercased()
    }

    /// A UUID: 16-bit (`2a37`), 32-bit (`0000180d`) or 128-bit
    /// (`0000180d-0000-1000-8000-00805f9b34fb`), lower-cased.
    static func uuid(_ text: String) throws(UsageError) -> String {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false).map(\.utf8.count)
        let allHex = text.utf8.allSatisfy { isHex($0) || $0 == UInt8(ascii: "-") }
        guard allHex, groups == [4] || groups == [8] || groups == [8, 4, 4, 4, 12] else {
            throw UsageError("\"\(text)\" is not a UUID (such as 2a37 or 00002a37-0000-1000-8000-00805f9b34fb)")
        }
        return text.lowercased()
    }

    /// Hex bytes (`0a1b`, `0a:1b`, `0a 1b`, `0x0a1b`) as lower-case hex digits.
    static func hexBytes(_ text: String) throws(UsageError) -> String {
        var digits = Substring(text)
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
        let clean = digits.utf8.filter { $0 != UInt8(ascii: ":") && $0 != UInt8(ascii: " ") }
        guard !clean.isEmpty, clean.count % 2 == 0, clean.allSatisfy(isHex) else {
            throw UsageError("\"\(text)\" is not hex bytes (an even number of hex digits, such as 0a1b or 0a:1b)")
        }
        return String(decoding: clean, as: UTF8.self).lowercased()
    }

    /// A positive number of seconds.
    static func seconds(_ text: String) throws(UsageError) -> Int64 {
        guard let value = Int64(text), value > 0, value <= 86_400 else {
            throw UsageError("\"\(text)\" is not a duration in seconds (1 to 86400)")
        }
        return value
    }

    /// UTF-8 text as lower-case hex digits.
    static func hex(ofText text: String) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in text.utf8 {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xf)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
