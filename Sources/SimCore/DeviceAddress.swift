/// A Bluetooth device address (BD_ADDR), six bytes written most significant first as
/// `AA:BB:CC:DD:EE:FF`, the way BlueZ prints it.
public struct DeviceAddress: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The six bytes, most significant first (the order they are written in).
    public let bytes: [UInt8]

    /// Parses `AA:BB:CC:DD:EE:FF` (either case); nil for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard part.count == 2, let byte = UInt8(part, radix: 16) else { return nil }
            bytes.append(byte)
        }
        self.bytes = bytes
    }

    /// An address from six bytes, most significant first; nil unless there are six.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 6 else { return nil }
        self.bytes = bytes
    }

    /// An address from six bytes, most significant first.
    public init(validBytes b: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8)) {
        bytes = [b.0, b.1, b.2, b.3, b.4, b.5]
    }

    /// `AA:BB:CC:DD:EE:FF`, upper case, as BlueZ's `Address` property shows it.
    public var description: String {
        bytes.map { byte in
            let digits = String(byte, radix: 16, uppercase: true)
            return digits.count == 1 ? "0" + digits : digits
        }.joined(separator: ":")
    }

    /// `dev_AA_BB_CC_DD_EE_FF`: the last component of the device's object path under its adapter.
    public var objectPathComponent: String {
        "dev_" + description.replacingColons(with: "_")
    }

    /// `AA-BB-CC-DD-EE-FF`: what BlueZ's `Alias` falls back to when a device has no name.
    public var dashed: String { description.replacingColons(with: "-") }

    /// Whether a random address is private (resolvable or non-resolvable: the two top bits are
    /// 00 or 01) rather than static (11). BlueZ never stores private-address devices.
    public func isPrivate(type: AddressType) -> Bool {
        type == .random && bytes[0] >> 6 != 0b11
    }

    public static func < (lhs: DeviceAddress, rhs: DeviceAddress) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }
}

/// `AddressType` of Adapter1 and Device1: "public" or "random".
public enum AddressType: String, Hashable, Sendable, CaseIterable {
    /// "public": an IEEE-assigned address.
    case `public`
    /// "random": a static or private random address (LE only).
    case random
}

extension String {
    fileprivate func replacingColons(with replacement: Character) -> String {
        String(map { $0 == ":" ? replacement : $0 })
    }
}
