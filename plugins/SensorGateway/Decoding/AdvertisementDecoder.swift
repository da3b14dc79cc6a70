import BLE
import BTHomeCrypto
import GATT

/// The format an advertisement is in, and the bytes its decoder reads.
public enum AdvertisementFormat: Sendable, Hashable {
    /// BTHome v2 service data (0xFCD2); `aggregator` when the Environmental
    /// Sensing UUID (0x181A) is advertised beside it, as the project's sensor
    /// aggregator does.
    case bthome([UInt8], aggregator: Bool)
    /// Eddystone service data (0xFEAA).
    case eddystone([UInt8])
    /// iBeacon manufacturer data (0x004C, `02 15 ...`).
    case ibeacon([UInt8])

    /// The service data UUID of Eddystone.
    public static let eddystoneUUID = BluetoothUUID(uuid16: 0xFEAA)

    /// The format of `advertisement`, nil when the gateway decodes none of
    /// it. Only dictionary lookups: no decoding, whatever the size of the data.
    public init?(_ advertisement: AdvertisementData) {
        if let data = advertisement.serviceData[.bthome] {
            self = .bthome(data, aggregator: advertisement.serviceUUIDs.contains(.environmentalSensing))
        } else if let data = advertisement.serviceData[Self.eddystoneUUID] {
            self = .eddystone(data)
        } else if let data = advertisement.manufacturerData[IBeaconDecoder.company], IBeaconDecoder.matches(data) {
            self = .ibeacon(data)
        } else {
            return nil
        }
    }

    /// The kind of device that sends this format.
    public var kind: DeviceKind {
        switch self {
        case .bthome(_, let aggregator): aggregator ? .aggregator : .bthome
        case .eddystone: .eddystone
        case .ibeacon: .ibeacon
        }
    }
}

/// One advertisement, decoded.
public struct DecodedAdvertisement: Sendable, Hashable {
    /// The device kind.
    public var kind: DeviceKind
    /// The readings.
    public var readings: [Reading]
    /// BTHome: whether the data was encrypted.
    public var encrypted = false
    /// BTHome: the packet id.
    public var packetID: UInt8?
    /// BTHome: the encryption counter.
    public var counter: UInt32?
    /// BTHome: the firmware version.
    public var firmware: String?
    /// BTHome: the device type id.
    public var deviceTypeID: UInt16?
    /// BTHome: what could not be read (the readings hold the rest).
    public var problems: [DecodeFailure] = []
}

/// Advertising data to readings: a pure function of the advertisement, the
/// sender's address and its bind key, dispatching to the format's decoder.
public enum AdvertisementDecoder {
    /// Decodes `format` heard from `address` (6 bytes) with the sender's
    /// bind key, if it has one.
    public static func decode(
        _ format: AdvertisementFormat, address: [UInt8], key: BTHomeBindKey?
    ) throws(DecodeFailure) -> DecodedAdvertisement {
        switch format {
        case .bthome(let data, _):
            let packet = try BTHomeDecoder.decode(data, address: address, key: key)
            return DecodedAdvertisement(
                kind: format.kind, readings: packet.readings, encrypted: packet.isEncrypted, packetID: packet.packetID,
                counter: packet.counter, firmware: packet.firmware, deviceTypeID: packet.deviceTypeID,
                problems: packet.problems)
        case .eddystone(let data):
            return DecodedAdvertisement(kind: .eddystone, readings: try EddystoneDecoder.decode(data))
        case .ibeacon(let data):
            return DecodedAdvertisement(kind: .ibeacon, readings: try IBeaconDecoder.decode(data))
        }
    }
}
