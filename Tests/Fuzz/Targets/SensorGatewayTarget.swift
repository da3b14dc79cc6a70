import BLE
import BTHomeCrypto
import GATT
import SensorGateway

/// The sensor gateway's decoders: BTHome v2 (plain and encrypted), iBeacon
/// and Eddystone, as the gateway reaches them from a remote device's
/// advertisement.
///
/// The first byte chooses how the rest is presented (its low two bits), and
/// whether the sender has a bind key (bit 2):
/// - 0: advertising data from the air (AD structures), dispatched on its
///   service and manufacturer data as the gateway does;
/// - 1: BTHome service data as it is;
/// - 2: BTHome objects, sent both plain and encrypted (the counter, the
///   MAC's presence and the trigger bit taken from bits 3 to 7): the two
///   must decode to the same packet, and encrypted data opens with its key
///   only;
/// - 3: an Eddystone frame, and the same bytes as iBeacon data.
///
/// Checks on every decoded advertisement: numbers are finite, names are
/// non-empty and unique within the advertisement (the gateway keeps the
/// latest reading per name), every failure has a reason and a sentence;
/// an encrypted packet's counter is the one the gateway reads before
/// decrypting.
enum SensorGatewayTarget {
    static let target = FuzzTarget(
        name: "sensor-gateway", summary: "sensor gateway: BTHome v2 (plain, encrypted), iBeacon and Eddystone decoders",
        seeds: { seeds }, body: run)

    /// The key a keyed sender has (bthome.io's example key) and another one.
    static let key = BTHomeBindKey(hex: "231d39c1d7cc1ab1aee224cd096db932")!
    static let otherKey = BTHomeBindKey(hex: "814aac74c4f17b6c1581e1ab87816b99")!
    /// The sender's address (bthome.io's example, most significant first).
    static let address: [UInt8] = [0x54, 0x48, 0xE6, 0x8F, 0x80, 0xA5]

    static func run(_ input: [UInt8]) throws(FuzzFinding) {
        guard let mode = input.first else { return }
        let payload = Array(input.dropFirst())
        let senderKey = mode & 0x04 != 0 ? key : nil
        switch mode & 0x03 {
        case 0:
            guard let parsed = try? AdvertisingData.parse(payload) else { return }
            let advertisement = AdvertisementData(
                serviceUUIDs: parsed.serviceUUIDs, manufacturerData: parsed.manufacturerData,
                serviceData: parsed.serviceData)
            guard let format = AdvertisementFormat(advertisement) else { return }
            try decode(format, key: senderKey)
        case 1:
            let decoded = try decode(.bthome(payload, aggregator: false), key: senderKey)
            if let decoded, decoded.encrypted {
                try require(
                    decoded.counter == BTHomeDecoder.encryptionCounter(payload),
                    "\(payload) decrypts with counter \(String(describing: decoded.counter)), read before as"
                        + " \(String(describing: BTHomeDecoder.encryptionCounter(payload)))")
            }
        case 2:
            try encryptedAgreesWithPlain(objects: payload, choices: mode >> 3)
        default:
            try decode(.eddystone(payload), key: nil)
            try decode(.ibeacon([0x02, 0x15] + payload), key: nil)
        }
    }

    /// Decodes `format` and checks the result; nil when it was refused.
    @discardableResult
    static func decode(_ format: AdvertisementFormat, key: BTHomeBindKey?) throws(FuzzFinding) -> DecodedAdvertisement?
    {
        let decoded: DecodedAdvertisement
        do {
            decoded = try AdvertisementDecoder.decode(format, address: address, key: key)
        } catch {
            try check(error)
            return nil
        }
        try require(decoded.kind == format.kind, "\(format) decoded as a \(decoded.kind)")
        var keys: Set<ReadingKey> = []
        for reading in decoded.readings {
            try require(!reading.name.isEmpty, "a reading without a name in \(decoded)")
            try require(keys.insert(reading.key).inserted, "two readings keyed \(reading.key) in \(decoded)")
            if case .number(let number) = reading.value {
                try require(number.isFinite, "the reading \(reading) from \(format)")
            }
        }
        for problem in decoded.problems { try check(problem) }
        if case .ibeacon(let data) = format {
            try require(data.count == 23 && decoded.readings.count == 4, "\(data) decoded as iBeacon \(decoded)")
        }
        return decoded
    }

    static func check(_ failure: DecodeFailure) throws(FuzzFinding) {
        try require(!failure.reason.isEmpty && !failure.description.isEmpty, "a failure without a reason: \(failure)")
    }

    /// `objects` sent plain and encrypted by the same device must read the
    /// same; the encrypted data opens only with its key.
    static func encryptedAgreesWithPlain(objects: [UInt8], choices: UInt8) throws(FuzzFinding) {
        let trigger: UInt8 = choices & 0x01 != 0 ? 0x04 : 0
        let includeMAC = choices & 0x02 != 0
        let counter = UInt32(choices >> 2) &* 0x0101_0101
        let plain: BTHomePacket
        do {
            plain = try BTHomeDecoder.decode([0x40 | trigger] + objects, address: address, key: nil)
        } catch {
            throw FuzzFinding("the plain objects \(objects) are refused: \(error)")
        }
        let sealed: [UInt8]
        do {
            sealed = try BTHomeEncryption.seal(
                objects: objects, deviceInfo: 0x40 | trigger, mac: address, counter: counter, key: key,
                includeMAC: includeMAC)
        } catch {
            throw FuzzFinding("the objects \(objects) do not seal: \(error)")
        }
        // The gateway reads the MAC from the data when it is there, else the sender's address.
        let heardFrom = includeMAC ? [0, 0, 0, 0, 0, 0] : address
        let opened: BTHomePacket
        do {
            opened = try BTHomeDecoder.decode(sealed, address: heardFrom, key: key)
        } catch {
            // Encrypted data carries at least one object byte.
            try require(objects.isEmpty, "\(sealed), \(objects) sealed, does not open: \(error)")
            return
        }
        try require(opened.isEncrypted && opened.counter == counter, "\(sealed) opened as \(opened)")
        try require(
            BTHomeDecoder.encryptionCounter(sealed) == counter, "\(sealed): the counter read before decrypting differs")
        var expected = plain
        expected.deviceInfo = opened.deviceInfo
        expected.counter = counter
        try require(opened == expected, "\(objects) read plain as \(plain), encrypted as \(opened)")
        try require(
            opened.deviceInfo == 0x41 | trigger | (includeMAC ? 0x02 : 0), "\(sealed) has device information \(opened)")
        let wrongKey = refusal(of: sealed, address: heardFrom, key: otherKey)
        try require(
            wrongKey?.reason == "bthome.decryption", "\(sealed) with another key: \(String(describing: wrongKey))")
        if !includeMAC {
            // The nonce holds the sender's address: another sender's data does not open with this key.
            let wrongSender = refusal(of: sealed, address: [1, 2, 3, 4, 5, 6], key: key)
            try require(
                wrongSender?.reason == "bthome.decryption",
                "\(sealed) from another address: \(String(describing: wrongSender))")
        }
        let noKey = refusal(of: sealed, address: heardFrom, key: nil)
        try require(noKey == .bthomeNoKey, "\(sealed) without a key: \(String(describing: noKey))")
    }

    /// Why `data` is refused; nil when it decodes.
    static func refusal(of data: [UInt8], address: [UInt8], key: BTHomeBindKey?) -> DecodeFailure? {
        do {
            _ = try BTHomeDecoder.decode(data, address: address, key: key)
            return nil
        } catch {
            return error
        }
    }

    static let seeds: [[UInt8]] = [
        // From the air: flags, BTHome service data (temperature, humidity), a name.
        [0x00, 0x02, 0x01, 0x06, 0x0B, 0x16, 0xD2, 0xFC, 0x40, 0x02, 0xCA, 0x09, 0x03, 0xBF, 0x13, 0x01, 0x5D]
            + [0x05, 0x09, 0x54, 0x61, 0x67, 0x31],
        // From the air: iBeacon manufacturer data (Apple), and Eddystone UID service data.
        [0x00, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15, 0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60]
            + [0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0, 0x00, 0x01, 0x00, 0x02, 0xC5],
        [0x00, 0x15, 0x16, 0xAA, 0xFE, 0x00, 0xEE, 0x8B, 0x0C, 0xA7, 0x50, 0x09, 0x54, 0x77, 0xCB, 0x3E, 0x77]
            + [0x00, 0x00, 0x00, 0x00, 0x00, 0x01],
        // BTHome service data: plain with packet id, device type and firmware; the aggregator's;
        // encrypted (bthome.io's example) with its key; encrypted with the MAC in the data; a downgrade.
        [0x01, 0x40, 0x00, 0x2A, 0x01, 0x64, 0xF0, 0x01, 0x00, 0xF2, 0x00, 0x01, 0x06],
        [0x01, 0x40, 0x01, 0x57, 0x02, 0x0A, 0x09, 0x03, 0x39, 0x12, 0x04, 0xC5, 0x8B, 0x01],
        [0x05, 0x41, 0xA4, 0x72, 0x66, 0xC9, 0x5F, 0x73, 0x00, 0x11, 0x22, 0x33, 0x78, 0x23, 0x72, 0x14],
        [0x05, 0x43, 0xA5, 0x80, 0x8F, 0xE6, 0x48, 0x54, 0xF1, 0x96, 0xC0, 0x6F, 0xFB, 0x49, 0x00, 0x11, 0x22]
            + [0x33, 0xF0, 0x8E, 0xCB, 0xDE],
        [0x05, 0x40, 0x04, 0x13, 0x8A, 0x01],
        // Objects sent plain and encrypted: out of order, a text, a button, a dimmer, a command.
        [0x02, 0x03, 0xBF, 0x13, 0x02, 0xCA, 0x09],
        [0x0E, 0x00, 0x07, 0x3A, 0x01, 0x3C, 0x01, 0x03, 0x53, 0x03, 0x61, 0x62, 0x63],
        [0x1E, 0x3B, 0x02, 0x01, 0xAA, 0xBB, 0x54, 0x02, 0x00, 0xFF],
        // Eddystone URL, TLM, EID (and the same bytes as iBeacon data).
        [0x03, 0x10, 0x12, 0x03, 0x67, 0x6F, 0x6F, 0x2E, 0x67, 0x6C, 0x2F, 0x53, 0x36, 0x7A, 0x54, 0x36, 0x50],
        [0x03, 0x20, 0x00, 0x0B, 0xB8, 0x17, 0x80, 0x00, 0x00, 0x03, 0xE8, 0x00, 0x00, 0x0E, 0x10],
        [0x03, 0x30, 0xF4, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08],
        // iBeacon data after `02 15`.
        [0x03, 0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0]
            + [0x00, 0x01, 0x00, 0x02, 0xC5],
    ]
}
