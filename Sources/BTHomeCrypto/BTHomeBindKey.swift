/// A BTHome v2 bind key: the 16-byte AES key one device encrypts with.
///
/// It never prints: `description` and `debugDescription` say only that a key
/// is there, so a key cannot reach a log line or a control API answer by
/// string interpolation.
public struct BTHomeBindKey: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The 16 bytes.
    public let bytes: [UInt8]

    /// A key from exactly 16 bytes.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// A key from 32 hex digits (either case), as BTHome devices show it.
    public init?(hex: some StringProtocol) {
        let digits = Array(hex.utf8)
        guard digits.count == 32 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        var index = 0
        while index < 32 {
            guard let high = Self.nibble(digits[index]), let low = Self.nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        self.bytes = bytes
    }

    /// `"bind key (redacted)"`.
    public var description: String { "bind key (redacted)" }
    /// `"bind key (redacted)"`.
    public var debugDescription: String { description }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
