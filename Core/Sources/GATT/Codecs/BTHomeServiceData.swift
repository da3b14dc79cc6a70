/// BTHome v2 service data: what follows the 16-bit UUID 0xFCD2
/// (``BluetoothUUID/bthome``) in a Service Data AD structure, read by Home
/// Assistant's BTHome integration without a connection (bthome.io, "BTHome
/// format v2").
///
/// One device information byte, then objects, each an object id and a value
/// whose length the id fixes; objects go in ascending id order (receivers
/// warn otherwise). Only unencrypted data is modelled.
///
/// ```
/// 40                 device info: version 2, not encrypted, regular updates
/// 01 57              battery 87 %
/// 02 0a 09           temperature 23.14 °C
/// 03 39 12           humidity 46.65 %
/// 04 c5 8b 01        pressure 1013.17 hPa
/// ```
public struct BTHomeServiceData: Hashable, Sendable {
    /// The device information byte.
    public var deviceInfo: BTHomeDeviceInfo
    /// The objects, in the order they appear (``encode()`` sorts them by id).
    public var objects: [BTHomeObject]

    /// Service data with `objects`, version 2, not encrypted.
    public init(deviceInfo: BTHomeDeviceInfo = BTHomeDeviceInfo(), objects: [BTHomeObject]) {
        self.deviceInfo = deviceInfo
        self.objects = objects
    }

    /// The bytes after the UUID: the device information byte, then the
    /// objects sorted by object id (stable for equal ids, as BTHome allows
    /// repeated ids for several sensors of one kind).
    ///
    /// - Throws: ``BTHomeError/encryptionNotSupported`` when
    ///   ``BTHomeDeviceInfo/isEncrypted`` is set; ``BTHomeError/valueOutOfRange(objectID:value:)``
    ///   for a pressure above 24 bits.
    public func encode() throws(BTHomeError) -> [UInt8] {
        guard !deviceInfo.isEncrypted else { throw .encryptionNotSupported }
        var bytes = [deviceInfo.rawValue]
        let ordered = objects.enumerated().sorted { ($0.element.id, $0.offset) < ($1.element.id, $1.offset) }
        for (_, object) in ordered {
            bytes += try object.encode()
        }
        return bytes
    }

    /// Decodes the bytes after the UUID.
    ///
    /// - Throws: ``BTHomeError``: empty data, a version other than 2,
    ///   encryption, a MAC flag without 6 address bytes, an object id this
    ///   decoder does not know (its length is unknown, so nothing after it can
    ///   be read), a truncated object, or ids out of ascending order.
    public static func decode(_ bytes: [UInt8]) throws(BTHomeError) -> BTHomeServiceData {
        guard let first = bytes.first else { throw .empty }
        let info = BTHomeDeviceInfo(rawValue: first)
        guard info.version == 2 else { throw .unsupportedVersion(info.version) }
        guard !info.isEncrypted else { throw .encryptionNotSupported }
        var offset = 1
        if info.hasMACAddress {
            guard bytes.count >= 7 else { throw .truncated(objectID: nil, offset: 1) }
            offset = 7
        }
        var objects: [BTHomeObject] = []
        var previousID: UInt8 = 0
        while offset < bytes.count {
            let id = bytes[offset]
            guard let length = BTHomeObject.valueLength(of: id) else { throw .unknownObjectID(id, offset: offset) }
            guard id >= previousID else { throw .objectsOutOfOrder(id: id, after: previousID, offset: offset) }
            guard offset + 1 + length <= bytes.count else { throw .truncated(objectID: id, offset: offset) }
            objects.append(BTHomeObject(id: id, value: Array(bytes[(offset + 1)...(offset + length)])))
            previousID = id
            offset += 1 + length
        }
        return BTHomeServiceData(deviceInfo: info, objects: objects)
    }
}

/// The BTHome device information byte: bit 0 encryption, bit 1 MAC address
/// included, bit 2 trigger-based (irregular) updates, bits 5-7 the version.
public struct BTHomeDeviceInfo: RawRepresentable, Hashable, Sendable {
    /// The byte.
    public let rawValue: UInt8

    /// The byte `rawValue` as received.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Version 2, not encrypted, no MAC address; `triggerBased` for a device
    /// that advertises only when something happens rather than regularly.
    public init(triggerBased: Bool = false) {
        rawValue = 2 << 5 | (triggerBased ? 0x04 : 0)
    }

    /// Bits 5-7.
    public var version: UInt8 { rawValue >> 5 }
    /// Bit 0.
    public var isEncrypted: Bool { rawValue & 0x01 != 0 }
    /// Bit 1: six MAC address bytes (reversed) follow this byte.
    public var hasMACAddress: Bool { rawValue & 0x02 != 0 }
    /// Bit 2: the device sends updates on events, not at a regular interval.
    public var isTriggerBased: Bool { rawValue & 0x04 != 0 }
}

/// One BTHome v2 object this project reads and writes.
public enum BTHomeObject: Hashable, Sendable {
    /// 0x00 packet id, `uint8`: receivers drop a repeated id.
    case packetID(UInt8)
    /// 0x01 battery, `uint8`, %.
    case battery(UInt8)
    /// 0x02 temperature, `sint16`, 0.01 °C.
    case temperature(centidegrees: Int16)
    /// 0x03 humidity, `uint16`, 0.01 %.
    case humidity(hundredthsPercent: UInt16)
    /// 0x04 pressure, `uint24`, 0.01 hPa (that is, pascals).
    case pressure(pascals: UInt32)

    /// The largest pressure a `uint24` carries.
    public static let maximumPressure: UInt32 = 0xFF_FFFF

    /// The object id.
    public var id: UInt8 {
        switch self {
        case .packetID: 0x00
        case .battery: 0x01
        case .temperature: 0x02
        case .humidity: 0x03
        case .pressure: 0x04
        }
    }

    /// The value in the unit Home Assistant shows: %, °C, %, hPa; the packet
    /// id as a number.
    public var value: Double {
        switch self {
        case .packetID(let id): Double(id)
        case .battery(let percent): Double(percent)
        case .temperature(let raw): Double(raw) / 100
        case .humidity(let raw): Double(raw) / 100
        case .pressure(let raw): Double(raw) / 100
        }
    }

    /// Temperature rounded to 0.01 °C, or nil outside the `sint16` range.
    public static func temperature(celsius: Double) -> BTHomeObject? {
        steps(celsius, resolution: 0.01, in: Int64(Int16.min)...Int64(Int16.max)).map {
            .temperature(centidegrees: Int16($0))
        }
    }

    /// Humidity rounded to 0.01 %, or nil outside 0...655.35.
    public static func humidity(percent: Double) -> BTHomeObject? {
        steps(percent, resolution: 0.01, in: 0...Int64(UInt16.max)).map { .humidity(hundredthsPercent: UInt16($0)) }
    }

    /// Pressure rounded to 1 Pa, or nil outside the `uint24` range.
    public static func pressure(pascals: Double) -> BTHomeObject? {
        steps(pascals, resolution: 1, in: 0...Int64(maximumPressure)).map { .pressure(pascals: UInt32($0)) }
    }

    /// Battery rounded to 1 %, or nil outside 0...100.
    public static func battery(percent: Double) -> BTHomeObject? {
        steps(percent, resolution: 1, in: 0...100).map { .battery(UInt8($0)) }
    }

    /// The value length for a known id, nil for others.
    static func valueLength(of id: UInt8) -> Int? {
        switch id {
        case 0x00, 0x01: 1
        case 0x02, 0x03: 2
        case 0x04: 3
        default: nil
        }
    }

    /// The object from its id and exactly ``valueLength(of:)`` bytes.
    init(id: UInt8, value: [UInt8]) {
        switch id {
        case 0x00: self = .packetID(value[0])
        case 0x01: self = .battery(value[0])
        case 0x02: self = .temperature(centidegrees: Int16(littleEndianBytes: value, at: 0))
        case 0x03: self = .humidity(hundredthsPercent: UInt16(littleEndianBytes: value, at: 0))
        default: self = .pressure(pascals: UInt32(value[0]) | UInt32(value[1]) << 8 | UInt32(value[2]) << 16)
        }
    }

    /// The id byte and the value.
    func encode() throws(BTHomeError) -> [UInt8] {
        switch self {
        case .packetID(let id): return [0x00, id]
        case .battery(let percent): return [0x01, percent]
        case .temperature(let raw): return [0x02] + raw.littleEndianBytes
        case .humidity(let raw): return [0x03] + raw.littleEndianBytes
        case .pressure(let raw):
            guard raw <= Self.maximumPressure else { throw .valueOutOfRange(objectID: 0x04, value: "\(raw) Pa") }
            return [0x04] + raw.littleEndianBytes.prefix(3)
        }
    }
}

/// Why BTHome service data could not be encoded or decoded.
public enum BTHomeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No device information byte.
    case empty
    /// The device information byte names a version other than 2.
    case unsupportedVersion(UInt8)
    /// The data is encrypted (or asked to be); this codec handles plain data only.
    case encryptionNotSupported
    /// An object id this codec does not know, at `offset`.
    case unknownObjectID(UInt8, offset: Int)
    /// The object at `offset` (or the MAC address, when `objectID` is nil)
    /// runs past the end.
    case truncated(objectID: UInt8?, offset: Int)
    /// Object `id` at `offset` follows the larger id `after`.
    case objectsOutOfOrder(id: UInt8, after: UInt8, offset: Int)
    /// The value does not fit the object's format.
    case valueOutOfRange(objectID: UInt8, value: String)

    /// One sentence.
    public var description: String {
        switch self {
        case .empty: return "BTHome service data is empty (no device information byte)"
        case .unsupportedVersion(let version): return "BTHome version \(version) is not supported (only 2)"
        case .encryptionNotSupported: return "encrypted BTHome data is not supported"
        case .unknownObjectID(let id, let offset): return "unknown BTHome object id \(hexByte(id)) at offset \(offset)"
        case .truncated(let id, let offset):
            let what = id.map { "BTHome object \(hexByte($0))" } ?? "BTHome MAC address"
            return "\(what) at offset \(offset) is truncated"
        case .objectsOutOfOrder(let id, let after, let offset):
            return "BTHome object \(hexByte(id)) at offset \(offset) follows \(hexByte(after)): ids must ascend"
        case .valueOutOfRange(let id, let value):
            return "\(value) does not fit BTHome object \(hexByte(id))"
        }
    }
}
