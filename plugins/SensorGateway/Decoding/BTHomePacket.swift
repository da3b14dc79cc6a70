import BTHomeCrypto

/// One decoded BTHome v2 advertisement.
public struct BTHomePacket: Sendable, Hashable {
    /// The device information byte.
    public var deviceInfo: UInt8
    /// The packet id (object 0x00), when the device sends one.
    public var packetID: UInt8?
    /// The encryption counter, for encrypted data.
    public var counter: UInt32?
    /// The readings, in packet order, named as Home Assistant names them.
    public var readings: [Reading]
    /// The BTHome device type id (object 0xF0).
    public var deviceTypeID: UInt16?
    /// The firmware version (object 0xF1 or 0xF2), `4.2.1.0`.
    public var firmware: String?
    /// What could not be read (the rest was kept): unknown or truncated
    /// objects, ids out of order, text that is not UTF-8.
    public var problems: [DecodeFailure]

    /// Bit 0: the data was encrypted.
    public var isEncrypted: Bool { deviceInfo & 0x01 != 0 }
    /// Bit 2: the device sends on events, not at regular intervals.
    public var isTriggerBased: Bool { deviceInfo & 0x04 != 0 }
}

/// BTHome v2 service data (the bytes after the UUID 0xFCD2) to a
/// ``BTHomePacket``: a pure function of the bytes, the sender's address and
/// its bind key.
///
/// It reads objects as Home Assistant's `bthome-ble` does: objects out of
/// order are read (and reported), an unknown object id or a truncated
/// object ends the packet with the objects before it kept, several objects
/// of one group are named `temperature_1`, `temperature_2`, ...
public enum BTHomeDecoder {
    /// The encryption counter of encrypted service data, read without
    /// checking the MIC (to drop a repeat before decrypting it); nil for
    /// plain or short data.
    public static func encryptionCounter(_ serviceData: [UInt8]) -> UInt32? {
        guard let info = serviceData.first, info & 0x01 != 0, serviceData.count >= 9 else { return nil }
        let end = serviceData.count
        return serviceData[(end - 8)..<(end - 4)].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    /// Decodes `serviceData` heard from `address` (6 bytes, most significant
    /// first). `key` is the device's bind key, if the key file has one.
    ///
    /// - Throws: ``DecodeFailure``: empty data, another version, a missing
    ///   key, a MIC that does not match, plain data from a keyed device.
    public static func decode(
        _ serviceData: [UInt8], address: [UInt8], key: BTHomeBindKey?
    ) throws(DecodeFailure) -> BTHomePacket {
        guard let info = serviceData.first else { throw .bthomeEmpty }
        guard info >> 5 == 2 else { throw .bthomeVersion(info >> 5) }
        let macLength = info & 0x02 != 0 ? 6 : 0
        guard serviceData.count >= 1 + macLength else { throw .bthomeTruncatedMAC }
        var packet = BTHomePacket(
            deviceInfo: info, packetID: nil, counter: nil, readings: [], deviceTypeID: nil, firmware: nil, problems: [])
        let objects: ArraySlice<UInt8>
        if info & 0x01 != 0 {
            guard let key else { throw .bthomeNoKey }
            do {
                let opened = try BTHomeEncryption.open(serviceData: serviceData, address: address, key: key)
                packet.counter = opened.counter
                objects = opened.objects[...]
            } catch {
                throw .bthomeDecryption(error.description)
            }
        } else {
            guard key == nil else { throw .bthomeDowngrade }
            objects = serviceData[(1 + macLength)...]
        }
        read(objects, into: &packet)
        return packet
    }

    /// Reads the objects of a plain payload into `packet`.
    static func read(_ payload: ArraySlice<UInt8>, into packet: inout BTHomePacket) {
        var found: [(type: BTHomeObjectType, value: ArraySlice<UInt8>)] = []
        var offset = payload.startIndex
        var previous: UInt8 = 0
        var reportedOrder = false
        while offset < payload.endIndex {
            let id = payload[offset]
            if id < previous, !reportedOrder {
                packet.problems.append(.bthomeObjectOrder)
                reportedOrder = true
            }
            guard let type = BTHomeObjectType.byID[Int(id)] else {
                packet.problems.append(.bthomeUnknownObject(id))
                break
            }
            previous = id
            let start: Int
            let length: Int
            if let fixed = type.length {
                start = offset + 1
                length = fixed
            } else {
                guard offset + 1 < payload.endIndex else {
                    packet.problems.append(.bthomeTruncatedObject(id))
                    break
                }
                start = offset + 2
                length = type.format == .command ? 1 + Int(payload[offset + 1] & 0x1F) : Int(payload[offset + 1])
            }
            guard start + length <= payload.endIndex else {
                packet.problems.append(.bthomeTruncatedObject(id))
                break
            }
            offset = start + length
            // A zero-length text or raw object carries nothing (Home Assistant skips it).
            if length > 0 { found.append((type, payload[start..<(start + length)])) }
        }
        var counts: [String: Int] = [:]
        for (type, _) in found where type.kind != nil { counts[type.group, default: 0] += 1 }
        var numbers: [String: Int] = [:]
        var positions: [ReadingKey: Int] = [:]
        for (type, value) in found {
            switch type.format {
            case .packetID: packet.packetID = value.first
            case .deviceTypeID: packet.deviceTypeID = UInt16(value[value.startIndex]) | UInt16(value.last!) << 8
            case .firmware: packet.firmware = value.reversed().map(String.init).joined(separator: ".")
            default:
                guard let kind = type.kind else { continue }
                var name = type.name
                if counts[type.group, default: 0] > 1 {
                    numbers[type.group, default: 0] += 1
                    name += "_\(numbers[type.group]!)"
                }
                if let reading = reading(type, value) {
                    let decoded = Reading(kind: kind, name: name, value: reading, unit: type.unit)
                    // Objects of one name in different units (0x06 mass in kg, 0x07 in lb) are not
                    // numbered apart: the last wins, in the first one's place, as in Home Assistant.
                    if let index = positions[decoded.key] {
                        packet.readings[index] = decoded
                    } else {
                        positions[decoded.key] = packet.readings.count
                        packet.readings.append(decoded)
                    }
                } else if type.format == .text {
                    packet.problems.append(.bthomeText)
                }
            }
        }
    }

    private static func reading(_ type: BTHomeObjectType, _ value: ArraySlice<UInt8>) -> ReadingValue? {
        switch type.format {
        case .unsigned, .signed:
            var raw: UInt64 = 0
            for byte in value.reversed() { raw = raw << 8 | UInt64(byte) }
            var number = Double(raw)
            if type.format == .signed, value.count < 8, raw & (1 << (value.count * 8 - 1)) != 0 {
                number -= Double(UInt64(1) << (value.count * 8))
            }
            if type.kind == .binary { return .flag(number != 0) }
            return .number(roundedToDecimalPlaces(number * type.factor, type.decimalPlaces))
        case .timestamp:
            var raw: UInt32 = 0
            for byte in value.reversed() { raw = raw << 8 | UInt32(byte) }
            return .number(Double(raw))
        case .text:
            return String(validating: Array(value), as: UTF8.self).map(ReadingValue.text)
        case .raw:
            return .text(hexString(value))
        case .button:
            return buttonEvents[value[value.startIndex]].map { .event(type: $0) }
        case .dimmer:
            return dimmerEvents[value[value.startIndex]].map { .event(type: $0, steps: Int(value.last!)) }
        case .command:
            return commandEvents[value[value.startIndex]].map {
                .event(type: $0, arguments: hexString(value.dropFirst()))
            }
        case .packetID, .deviceTypeID, .firmware:
            return nil
        }
    }

    /// Button event codes (0x3A); 0x00 is "no press".
    static let buttonEvents: [UInt8: String] = [
        0x01: "press", 0x02: "double_press", 0x03: "triple_press", 0x04: "long_press", 0x05: "long_double_press",
        0x06: "long_triple_press", 0x80: "hold_press", 0x81: "hold_release",
    ]
    /// Dimmer event codes (0x3C); 0x00 is "no rotation".
    static let dimmerEvents: [UInt8: String] = [0x01: "rotate_left", 0x02: "rotate_right"]
    /// Command opcodes (0x3B).
    static let commandEvents: [UInt8: String] = [
        0x00: "off", 0x01: "on", 0x02: "toggle", 0x03: "step_up", 0x04: "step_down",
    ]
}
