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
        let digits = Array(hex)
        guard digits.count == 32, digits.allSatisfy({ $0.isASCII && $0.isHexDigit }) else { return nil }
        bytes = stride(from: 0, to: 32, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
    }

    /// `"bind key (redacted)"`.
    public var description: String { "bind key (redacted)" }
    /// `"bind key (redacted)"`.
    public var debugDescription: String { description }

}
