/// The type octet of an AD structure (Core Specification Supplement Part A;
/// Assigned Numbers "Common Data Types"). Open: unknown types round-trip.
public struct AdvertisingDataType: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The type octet.
    public let rawValue: UInt8

    /// The type `rawValue`.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// The type `rawValue`.
    public init(_ rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// 0x01 Flags.
    public static let flags = AdvertisingDataType(0x01)
    /// 0x02 Incomplete List of 16-bit Service UUIDs.
    public static let incompleteServiceUUIDs16 = AdvertisingDataType(0x02)
    /// 0x03 Complete List of 16-bit Service UUIDs.
    public static let completeServiceUUIDs16 = AdvertisingDataType(0x03)
    /// 0x04 Incomplete List of 32-bit Service UUIDs.
    public static let incompleteServiceUUIDs32 = AdvertisingDataType(0x04)
    /// 0x05 Complete List of 32-bit Service UUIDs.
    public static let completeServiceUUIDs32 = AdvertisingDataType(0x05)
    /// 0x06 Incomplete List of 128-bit Service UUIDs.
    public static let incompleteServiceUUIDs128 = AdvertisingDataType(0x06)
    /// 0x07 Complete List of 128-bit Service UUIDs.
    public static let completeServiceUUIDs128 = AdvertisingDataType(0x07)
    /// 0x08 Shortened Local Name.
    public static let shortenedLocalName = AdvertisingDataType(0x08)
    /// 0x09 Complete Local Name.
    public static let completeLocalName = AdvertisingDataType(0x09)
    /// 0x0A Tx Power Level.
    public static let txPowerLevel = AdvertisingDataType(0x0A)
    /// 0x0D Class of Device.
    public static let classOfDevice = AdvertisingDataType(0x0D)
    /// 0x14 List of 16-bit Service Solicitation UUIDs.
    public static let serviceSolicitationUUIDs16 = AdvertisingDataType(0x14)
    /// 0x15 List of 128-bit Service Solicitation UUIDs.
    public static let serviceSolicitationUUIDs128 = AdvertisingDataType(0x15)
    /// 0x16 Service Data - 16-bit UUID.
    public static let serviceData16 = AdvertisingDataType(0x16)
    /// 0x17 Public Target Address.
    public static let publicTargetAddress = AdvertisingDataType(0x17)
    /// 0x18 Random Target Address.
    public static let randomTargetAddress = AdvertisingDataType(0x18)
    /// 0x19 Appearance.
    public static let appearance = AdvertisingDataType(0x19)
    /// 0x1A Advertising Interval.
    public static let advertisingInterval = AdvertisingDataType(0x1A)
    /// 0x1B LE Bluetooth Device Address.
    public static let leDeviceAddress = AdvertisingDataType(0x1B)
    /// 0x1C LE Role.
    public static let leRole = AdvertisingDataType(0x1C)
    /// 0x1F List of 32-bit Service Solicitation UUIDs.
    public static let serviceSolicitationUUIDs32 = AdvertisingDataType(0x1F)
    /// 0x20 Service Data - 32-bit UUID.
    public static let serviceData32 = AdvertisingDataType(0x20)
    /// 0x21 Service Data - 128-bit UUID.
    public static let serviceData128 = AdvertisingDataType(0x21)
    /// 0x24 URI.
    public static let uri = AdvertisingDataType(0x24)
    /// 0xFF Manufacturer Specific Data.
    public static let manufacturerSpecificData = AdvertisingDataType(0xFF)

    /// The service UUID list type for `width`, complete or not.
    public static func serviceUUIDs(_ width: BluetoothUUID.Width, complete: Bool) -> AdvertisingDataType {
        switch width {
        case .bits16: return complete ? .completeServiceUUIDs16 : .incompleteServiceUUIDs16
        case .bits32: return complete ? .completeServiceUUIDs32 : .incompleteServiceUUIDs32
        case .bits128: return complete ? .completeServiceUUIDs128 : .incompleteServiceUUIDs128
        }
    }

    /// The service data type for a UUID of `width`.
    public static func serviceData(_ width: BluetoothUUID.Width) -> AdvertisingDataType {
        switch width {
        case .bits16: return .serviceData16
        case .bits32: return .serviceData32
        case .bits128: return .serviceData128
        }
    }

    /// The types ``AdvertisingData`` holds in typed fields rather than in
    /// ``AdvertisingData/others``.
    public var isModelled: Bool {
        (0x01...0x0A).contains(rawValue) || [0x16, 0x19, 0x20, 0x21, 0xFF].contains(rawValue)
    }

    /// The Assigned Numbers name, or nil when this table has none.
    public var name: String? {
        Self.names[rawValue]
    }

    /// `Complete Local Name (0x09)`, or `AD type 0x3F` when unnamed.
    public var description: String {
        guard let name else { return "AD type \(hexByte(rawValue))" }
        return "\(name) (\(hexByte(rawValue)))"
    }

    /// Orders by type octet.
    public static func < (lhs: AdvertisingDataType, rhs: AdvertisingDataType) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    private static let names: [UInt8: String] = [
        0x01: "Flags",
        0x02: "Incomplete List of 16-bit Service UUIDs",
        0x03: "Complete List of 16-bit Service UUIDs",
        0x04: "Incomplete List of 32-bit Service UUIDs",
        0x05: "Complete List of 32-bit Service UUIDs",
        0x06: "Incomplete List of 128-bit Service UUIDs",
        0x07: "Complete List of 128-bit Service UUIDs",
        0x08: "Shortened Local Name",
        0x09: "Complete Local Name",
        0x0A: "Tx Power Level",
        0x0D: "Class of Device",
        0x14: "List of 16-bit Service Solicitation UUIDs",
        0x15: "List of 128-bit Service Solicitation UUIDs",
        0x16: "Service Data - 16-bit UUID",
        0x17: "Public Target Address",
        0x18: "Random Target Address",
        0x19: "Appearance",
        0x1A: "Advertising Interval",
        0x1B: "LE Bluetooth Device Address",
        0x1C: "LE Role",
        0x1F: "List of 32-bit Service Solicitation UUIDs",
        0x20: "Service Data - 32-bit UUID",
        0x21: "Service Data - 128-bit UUID",
        0x24: "URI",
        0xFF: "Manufacturer Specific Data",
    ]
}

/// One AD structure: a length octet (type plus data), a type octet, data.
public struct AdvertisingStructure: Hashable, Sendable, CustomStringConvertible {
    /// The most data one structure can carry: its length octet counts the type
    /// octet too, so 255 - 1.
    public static let maximumDataLength = 254

    /// The AD type.
    public var type: AdvertisingDataType
    /// The data after the type octet.
    public var data: [UInt8]

    /// The structure `type` carrying `data`.
    public init(type: AdvertisingDataType, data: [UInt8]) {
        self.type = type
        self.data = data
    }

    /// Bytes taken on the wire: length octet, type octet, data.
    public var encodedLength: Int { 2 + data.count }

    /// `Flags (0x01): 06`.
    public var description: String {
        "\(type): \(hexString(data))"
    }

    /// Splits bytes into AD structures. A zero length octet ends the data (the
    /// spec's terminator; what follows is padding and is ignored).
    ///
    /// - Throws: ``AdvertisingDataError/structureOverrunsEnd(offset:declaredLength:available:)``
    ///   when a structure's length runs past the end.
    public static func parseAll(_ bytes: [UInt8]) throws(AdvertisingDataError) -> [AdvertisingStructure] {
        try parseLocated(bytes).map(\.structure)
    }

    /// Joins structures into bytes, in order.
    ///
    /// - Throws: ``AdvertisingDataError/structureTooLong(type:dataLength:)``
    ///   when one carries more than ``maximumDataLength`` bytes.
    public static func encodeAll(_ structures: [AdvertisingStructure]) throws(AdvertisingDataError) -> [UInt8] {
        var bytes: [UInt8] = []
        for structure in structures {
            guard structure.data.count <= maximumDataLength else {
                throw .structureTooLong(type: structure.type, dataLength: structure.data.count)
            }
            bytes.append(UInt8(structure.data.count + 1))
            bytes.append(structure.type.rawValue)
            bytes += structure.data
        }
        return bytes
    }

    /// A structure and the offset of its length octet.
    typealias Located = (offset: Int, structure: AdvertisingStructure)

    /// The structures with the offset of each one's length octet.
    static func parseLocated(_ bytes: [UInt8]) throws(AdvertisingDataError) -> [Located] {
        var located: [Located] = []
        var offset = 0
        while offset < bytes.count {
            let length = Int(bytes[offset])
            if length == 0 { break }
            let available = bytes.count - offset - 1
            guard length <= available else {
                throw .structureOverrunsEnd(offset: offset, declaredLength: length, available: available)
            }
            let type = AdvertisingDataType(bytes[offset + 1])
            let data = Array(bytes[(offset + 2)..<(offset + 1 + length)])
            located.append((offset, AdvertisingStructure(type: type, data: data)))
            offset += 1 + length
        }
        return located
    }
}

/// The Flags AD type's bits (Core Specification Supplement Part A 1.3).
public struct AdvertisingFlags: OptionSet, Hashable, Sendable, CustomStringConvertible {
    /// The flags octet.
    public let rawValue: UInt8

    /// The flags whose bits are `rawValue`.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// 0x01 LE Limited Discoverable Mode.
    public static let limitedDiscoverable = AdvertisingFlags(rawValue: 0x01)
    /// 0x02 LE General Discoverable Mode.
    public static let generalDiscoverable = AdvertisingFlags(rawValue: 0x02)
    /// 0x04 BR/EDR Not Supported.
    public static let brEdrNotSupported = AdvertisingFlags(rawValue: 0x04)
    /// 0x08 Simultaneous LE and BR/EDR to Same Device Capable (Controller).
    public static let simultaneousLEAndBREDRController = AdvertisingFlags(rawValue: 0x08)
    /// 0x10 Simultaneous LE and BR/EDR to Same Device Capable (Host).
    public static let simultaneousLEAndBREDRHost = AdvertisingFlags(rawValue: 0x10)

    /// The flags most LE peripherals advertise (0x06): general discoverable,
    /// BR/EDR not supported. bluetoothd sets these for a connectable or
    /// `Discoverable` advertisement on an LE-only adapter.
    public static let leGeneralDiscoverable: AdvertisingFlags = [.generalDiscoverable, .brEdrNotSupported]

    /// The member names in bit order; unknown bits in hex.
    public var description: String {
        describeOptions(
            rawValue: UInt64(rawValue),
            names: [
                (0x01, "limitedDiscoverable"), (0x02, "generalDiscoverable"), (0x04, "brEdrNotSupported"),
                (0x08, "simultaneousLEAndBREDRController"), (0x10, "simultaneousLEAndBREDRHost"),
            ])
    }
}
