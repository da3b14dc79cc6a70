/// A Bluetooth device address, `AA:BB:CC:DD:EE:FF`: the gateway's device id.
public struct DeviceAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The 48 bits, most significant byte first.
    public let value: UInt64

    /// The address from its 48-bit value.
    public init(value: UInt64) { self.value = value & 0xFFFF_FFFF_FFFF }

    /// Parses `AA:BB:CC:DD:EE:FF` (either case); nil for anything else.
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6,
            parts.allSatisfy({ $0.utf8.count == 2 && $0.allSatisfy { $0.isASCII && $0.isHexDigit } })
        else {
            return nil
        }
        value = parts.reduce(UInt64(0)) { $0 << 8 | UInt64(UInt8($1, radix: 16)!) }
    }

    /// The six bytes, most significant first (the order BTHome's nonce uses).
    public var bytes: [UInt8] { (0..<6).map { UInt8(truncatingIfNeeded: value >> (40 - 8 * UInt64($0))) } }

    /// `AA:BB:CC:DD:EE:FF`, upper case.
    public var description: String {
        let digits: [Character] = Array("0123456789ABCDEF")
        var text = ""
        for (index, byte) in bytes.enumerated() {
            if index > 0 { text.append(":") }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return text
    }

    /// By value.
    public static func < (lhs: DeviceAddress, rhs: DeviceAddress) -> Bool { lhs.value < rhs.value }

}
