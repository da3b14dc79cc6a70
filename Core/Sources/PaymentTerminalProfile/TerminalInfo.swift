/// What a terminal can do. Open: bits this version does not name round-trip.
public struct TerminalCapabilities: OptionSet, Hashable, Sendable, CustomStringConvertible {
    /// The bits.
    public let rawValue: UInt16

    /// The set with these bits.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Contactless cards and wallets.
    public static let contactless = TerminalCapabilities(rawValue: 0x0001)
    /// Chip (contact) cards.
    public static let chip = TerminalCapabilities(rawValue: 0x0002)
    /// Magnetic stripe.
    public static let magneticStripe = TerminalCapabilities(rawValue: 0x0004)
    /// PIN entry.
    public static let pinEntry = TerminalCapabilities(rawValue: 0x0008)
    /// Prints receipts.
    public static let printer = TerminalCapabilities(rawValue: 0x0010)

    private static let names: [(TerminalCapabilities, String)] = [
        (.contactless, "contactless"), (.chip, "chip"), (.magneticStripe, "magneticStripe"),
        (.pinEntry, "pinEntry"), (.printer, "printer"),
    ]

    /// The names of the set bits (unnamed bits as `0xNNNN`), comma-separated.
    public var description: String { names().joined(separator: ",") }

    /// The names of the set bits; unnamed bits as one `0xNNNN` entry.
    public func names() -> [String] {
        var result = Self.names.filter { contains($0.0) }.map(\.1)
        let unnamed = rawValue & ~Self.names.reduce(0) { $0 | $1.0.rawValue }
        if unnamed != 0 { result.append("0x" + String(unnamed, radix: 16)) }
        return result
    }

    /// The capability named `name` (as in ``names()``), or nil.
    public init?(name: String) {
        guard let match = Self.names.first(where: { $0.1 == name }) else { return nil }
        self = match.0
    }
}

/// The Terminal Info characteristic's value (version 1).
///
/// ```
/// offset size field
///  0      1   version (1)
///  1      2   capabilities, little-endian bit set
///  3      1+n terminal id: length 1 ... 32, UTF-8
///  .      1+n vendor:      length 0 ... 32, UTF-8
///  .      1+n model:       length 0 ... 32, UTF-8
///  .      1+n firmware:    length 0 ... 32, UTF-8
/// ```
/// 8 to 135 bytes; centrals read it with long reads when it passes the MTU.
public struct TerminalInfo: Hashable, Sendable {
    /// The longest of each text field, in UTF-8 bytes.
    public static let maximumFieldLength = 32
    /// The largest encoded size.
    public static let maximumSize = 3 + 4 * (1 + maximumFieldLength)

    /// The terminal's id (unique per merchant; printed on the device).
    public var terminalID: String
    /// The maker.
    public var vendor: String
    /// The model.
    public var model: String
    /// The firmware version.
    public var firmware: String
    /// What it supports.
    public var capabilities: TerminalCapabilities

    /// Info; throws if the id is empty or a field is longer than 32 bytes.
    public init(
        terminalID: String, vendor: String, model: String, firmware: String, capabilities: TerminalCapabilities
    ) throws(PaymentTerminalValueError) {
        guard !terminalID.isEmpty else { throw PaymentTerminalValueError(field: "terminalId", "must not be empty") }
        for (name, value) in [("terminalId", terminalID), ("vendor", vendor), ("model", model), ("firmware", firmware)]
        where value.utf8.count > Self.maximumFieldLength {
            throw PaymentTerminalValueError(field: name, "must be at most \(Self.maximumFieldLength) bytes of UTF-8")
        }
        self.terminalID = terminalID
        self.vendor = vendor
        self.model = model
        self.firmware = firmware
        self.capabilities = capabilities
    }

    /// The wire bytes.
    public func encoded() -> [UInt8] {
        [PaymentTerminalProfile.formatVersion] + capabilities.rawValue.littleEndianPair + lengthPrefixed(terminalID)
            + lengthPrefixed(vendor) + lengthPrefixed(model) + lengthPrefixed(firmware)
    }

    /// Decodes a peer's value.
    public init(decoding bytes: [UInt8]) throws(PaymentTerminalDecodingError) {
        let format = PaymentTerminalFormat.terminalInfo
        guard !bytes.isEmpty else { throw .empty(format: format) }
        var reader = ByteReader(bytes, format: format)
        try reader.version()
        guard bytes.count <= Self.maximumSize else {
            throw .oversized(format: format, size: bytes.count, maximum: Self.maximumSize)
        }
        capabilities = TerminalCapabilities(rawValue: try reader.uint16("capabilities"))
        terminalID = try reader.string("terminal id", maximum: Self.maximumFieldLength)
        guard !terminalID.isEmpty else { throw .invalidField(format: format, field: "terminal id", reason: "is empty") }
        vendor = try reader.string("vendor", maximum: Self.maximumFieldLength)
        model = try reader.string("model", maximum: Self.maximumFieldLength)
        firmware = try reader.string("firmware", maximum: Self.maximumFieldLength)
        try reader.end()
    }
}
