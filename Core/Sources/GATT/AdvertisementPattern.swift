/// One pattern of an advertisement monitor (BlueZ's `org.bluez.AdvertisementMonitor1`
/// `Patterns`, one `(yyay)` entry): an advertisement matches when one of its AD structures of
/// type ``adType`` holds ``content`` at byte ``start`` of its data (the bytes after the type).
///
/// The limits are bluetoothd 5.66's (`bt_ad_pattern_new` in src/shared/ad.c): the AD type is
/// 0x01...0x3D or 0xFF, the content 1...31 bytes, and `start + content.count` at most 31.
///
/// ```swift
/// let bthome = try AdvertisementPattern.serviceData16(0xFCD2)
/// let iBeacon = try AdvertisementPattern(adType: 0xFF, content: [0x4C, 0x00, 0x02, 0x15])
/// ```
public struct AdvertisementPattern: Hashable, Sendable, CustomStringConvertible {
    /// The most bytes of AD data a pattern can cover (`BT_AD_MAX_DATA_LEN`).
    public static let maximumLength = 31

    /// Where in the AD structure's data (after its type byte) ``content`` starts.
    public let start: UInt8
    /// The AD type, for example 0x16 (Service Data, 16-bit UUID) or 0xFF (Manufacturer Specific Data).
    public let adType: UInt8
    /// The bytes to match, 1...31 of them.
    public let content: [UInt8]

    /// Why a pattern is refused: bluetoothd would release a monitor holding it.
    public struct Invalid: Error, Hashable, Sendable, CustomStringConvertible {
        /// What is wrong, in words.
        public let description: String
    }

    /// A pattern; throws ``Invalid`` for what bluetoothd 5.66 refuses.
    public init(start: UInt8 = 0, adType: UInt8, content: [UInt8]) throws(Invalid) {
        guard (0x01...0x3D).contains(adType) || adType == 0xFF else {
            throw Invalid(description: "AD type 0x\(Self.hex(adType)) is not one BlueZ monitors (0x01...0x3D or 0xFF)")
        }
        guard !content.isEmpty else { throw Invalid(description: "the content is empty") }
        guard Int(start) + content.count <= Self.maximumLength else {
            throw Invalid(
                description: "start \(start) + \(content.count) bytes of content passes the \(Self.maximumLength) "
                    + "bytes of AD data")
        }
        self.start = start
        self.adType = adType
        self.content = content
    }

    /// Service data for the 16-bit UUID `uuid` (AD type 0x16; the UUID little-endian), optionally
    /// followed by the first bytes of the data.
    public static func serviceData16(_ uuid: UInt16, prefix: [UInt8] = []) throws(Invalid) -> AdvertisementPattern {
        try AdvertisementPattern(adType: 0x16, content: [UInt8(uuid & 0xFF), UInt8(uuid >> 8)] + prefix)
    }

    /// Manufacturer specific data of `companyID` (AD type 0xFF; the identifier little-endian),
    /// optionally followed by the first bytes of the data.
    public static func manufacturerData(
        _ companyID: UInt16, prefix: [UInt8] = []
    ) throws(Invalid)
        -> AdvertisementPattern
    {
        try AdvertisementPattern(adType: 0xFF, content: [UInt8(companyID & 0xFF), UInt8(companyID >> 8)] + prefix)
    }

    /// Whether one of `structures` matches (bluetoothd's `pattern_ad_data_match`).
    public func matches(_ structures: [AdvertisingStructure]) -> Bool {
        structures.contains { structure in
            guard structure.type.rawValue == adType, structure.data.count >= Int(start) + content.count else {
                return false
            }
            return structure.data[Int(start)..<Int(start) + content.count].elementsEqual(content)
        }
    }

    /// Whether any of `patterns` matches `structures`: the `or_patterns` monitor type.
    public static func anyMatches(_ patterns: [AdvertisementPattern], _ structures: [AdvertisingStructure]) -> Bool {
        patterns.contains { $0.matches(structures) }
    }

    /// `start/0xTYPE/content` in hex, for example `0/0x16/d2fc`.
    public var description: String {
        "\(start)/0x\(Self.hex(adType))/\(content.map(Self.hex).joined())"
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16)
        return digits.count == 1 ? "0" + digits : digits
    }
}
