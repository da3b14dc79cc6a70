/// The contents of an advertisement or scan response, typed.
///
/// ``parse(_:)`` reads what a controller receives; ``encode(limit:shortenNameToFit:)``
/// builds what a controller sends. Types without a typed field are kept raw,
/// in order, in ``others``.
public struct AdvertisingData: Hashable, Sendable {
    /// Flags (0x01), or nil when absent.
    public var flags: AdvertisingFlags?
    /// Service UUIDs from the 16-, 32- and 128-bit lists (0x02-0x07), in order.
    public var serviceUUIDs: [BluetoothUUID]
    /// Whether the service UUID lists are complete (0x03/0x05/0x07) rather than
    /// incomplete (0x02/0x04/0x06). Parsing sets it false when any list was
    /// incomplete. Only meaningful with at least one UUID.
    public var serviceUUIDsAreComplete: Bool
    /// The local name (0x08/0x09), or nil.
    public var localName: String?
    /// Whether ``localName`` is complete (0x09) or shortened (0x08).
    public var isCompleteName: Bool
    /// Tx Power Level (0x0A) in dBm, or nil.
    public var txPower: Int8?
    /// Appearance (0x19), or nil.
    public var appearance: UInt16?
    /// Service data (0x16/0x20/0x21) by service UUID, in order. A repeated UUID
    /// keeps its first position and its last value, as BlueZ reports it.
    public var serviceData: OrderedMap<BluetoothUUID, [UInt8]>
    /// Manufacturer specific data (0xFF) by company identifier, in order; the
    /// identifier is little-endian on the wire and not part of the value.
    public var manufacturerData: OrderedMap<UInt16, [UInt8]>
    /// Every other AD structure, raw, in order.
    public var others: [AdvertisingStructure]

    /// Advertising data with the given fields; empty unless told.
    public init(
        flags: AdvertisingFlags? = nil, serviceUUIDs: [BluetoothUUID] = [], serviceUUIDsAreComplete: Bool = true,
        localName: String? = nil, isCompleteName: Bool = true, txPower: Int8? = nil, appearance: UInt16? = nil,
        serviceData: OrderedMap<BluetoothUUID, [UInt8]> = [:], manufacturerData: OrderedMap<UInt16, [UInt8]> = [:],
        others: [AdvertisingStructure] = []
    ) {
        self.flags = flags
        self.serviceUUIDs = serviceUUIDs
        self.serviceUUIDsAreComplete = serviceUUIDsAreComplete
        self.localName = localName
        self.isCompleteName = isCompleteName
        self.txPower = txPower
        self.appearance = appearance
        self.serviceData = serviceData
        self.manufacturerData = manufacturerData
        self.others = others
    }

    /// Whether nothing would be encoded.
    public var isEmpty: Bool {
        flags == nil && serviceUUIDs.isEmpty && localName == nil && txPower == nil && appearance == nil
            && serviceData.isEmpty && manufacturerData.isEmpty && others.isEmpty
    }
}

extension AdvertisingData {
    /// Parses advertising data (an advertisement's or a scan response's
    /// payload).
    ///
    /// A zero length octet ends the data; the rest is padding. Later
    /// occurrences of a single-valued type (flags, name, Tx power, appearance)
    /// replace earlier ones, as in BlueZ. The local name is read as bluetoothd
    /// reads it (src/eir.c): trailing NUL bytes dropped; bytes that are not
    /// valid UTF-8 (or hold a NUL) read as ASCII up to the first NUL, other
    /// bytes as spaces, surrounding whitespace trimmed.
    ///
    /// - Throws: ``AdvertisingDataError`` with the offset of the bad structure:
    ///   a length past the end; Flags, Tx Power or Appearance not 1, 1, 2 bytes;
    ///   a UUID list not a multiple of its UUID width; service data shorter
    ///   than its UUID; manufacturer data shorter than a company identifier.
    public static func parse(_ bytes: [UInt8]) throws(AdvertisingDataError) -> AdvertisingData {
        var result = AdvertisingData()
        for (offset, structure) in try AdvertisingStructure.parseLocated(bytes) {
            try result.absorb(structure, at: offset)
        }
        return result
    }

    private mutating func absorb(_ structure: AdvertisingStructure, at offset: Int) throws(AdvertisingDataError) {
        let data = structure.data
        func require(_ valid: Bool, _ expected: AdvertisingDataError.LengthRequirement) throws(AdvertisingDataError) {
            guard valid else {
                throw .invalidLength(type: structure.type, offset: offset, length: data.count, expected: expected)
            }
        }
        switch structure.type {
        case .flags:
            try require(data.count == 1, .exactly(1))
            flags = AdvertisingFlags(rawValue: data[0])
        case .incompleteServiceUUIDs16, .completeServiceUUIDs16, .incompleteServiceUUIDs32, .completeServiceUUIDs32,
            .incompleteServiceUUIDs128, .completeServiceUUIDs128:
            let width: BluetoothUUID.Width =
                structure.type.rawValue <= 0x03 ? .bits16 : structure.type.rawValue <= 0x05 ? .bits32 : .bits128
            try require(data.count % width.byteCount == 0, .multipleOf(width.byteCount))
            for start in stride(from: 0, to: data.count, by: width.byteCount) {
                serviceUUIDs.append(Self.uuid(Array(data[start..<(start + width.byteCount)])))
            }
            if structure.type.rawValue % 2 == 0 { serviceUUIDsAreComplete = false }
        case .shortenedLocalName, .completeLocalName:
            localName = Self.decodeName(data)
            isCompleteName = structure.type == .completeLocalName
        case .txPowerLevel:
            try require(data.count == 1, .exactly(1))
            txPower = Int8(bitPattern: data[0])
        case .appearance:
            try require(data.count == 2, .exactly(2))
            appearance = UInt16(littleEndianBytes: data, at: 0)
        case .serviceData16, .serviceData32, .serviceData128:
            let width: BluetoothUUID.Width =
                structure.type == .serviceData16 ? .bits16 : structure.type == .serviceData32 ? .bits32 : .bits128
            try require(data.count >= width.byteCount, .atLeast(width.byteCount))
            serviceData[Self.uuid(Array(data[0..<width.byteCount]))] = Array(data[width.byteCount...])
        case .manufacturerSpecificData:
            try require(data.count >= 2, .atLeast(2))
            manufacturerData[UInt16(littleEndianBytes: data, at: 0)] = Array(data[2...])
        default:
            others.append(structure)
        }
    }

    /// A UUID from 2, 4 or 16 little-endian bytes; callers pass only those.
    private static func uuid(_ bytes: [UInt8]) -> BluetoothUUID {
        (try? BluetoothUUID(littleEndianBytes: bytes)) ?? .base
    }

    /// bluetoothd's reading of a name field (src/eir.c `eir_parse`, `name2utf8`).
    static func decodeName(_ data: [UInt8]) -> String {
        var bytes = data[...]
        while bytes.last == 0 { bytes.removeLast() }
        if !bytes.contains(0), let text = String(validating: bytes, as: UTF8.self) { return text }
        let ascii = bytes.prefix { $0 != 0 }.map { $0 < 0x80 ? $0 : UInt8(ascii: " ") }
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || (0x09...0x0D).contains($0) }
        guard let first = ascii.firstIndex(where: { !isSpace($0) }),
            let last = ascii.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(decoding: ascii[first...last], as: UTF8.self)
    }
}
