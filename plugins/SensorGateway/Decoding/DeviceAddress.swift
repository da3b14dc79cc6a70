/// A Bluetooth device address, `AA:BB:CC:DD:EE:FF`: the gateway's device id.
public struct DeviceAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The 48 bits, most significant byte first.
    public let value: UInt64

    /// The address from its 48-bit value.
    public init(value: UInt64) { self.value = value & 0xFFFF_FFFF_FFFF }

    /// Parses `AA:BB:CC:DD:EE:FF` (either case); nil for anything else.
    public init?(_ text: some StringProtocol) {
        let utf8 = Array(text.utf8)
        guard utf8.count == 17 else { return nil }
        var value: UInt64 = 0
        for index in 0..<6 {
            let offset = index * 3
            if index > 0 && utf8[offset - 1] != UInt8(ascii: ":") { return nil }
            guard let high = Self.nibble(utf8[offset]), let low = Self.nibble(utf8[offset + 1]) else { return nil }
            value = value << 8 | UInt64(high << 4 | low)
        }
        self.value = value
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

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
