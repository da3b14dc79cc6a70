/// Apple iBeacon: manufacturer data of company 0x004C that starts `02 15`
/// (Proximity Beacon Specification): a 16-byte proximity UUID, major and
/// minor (`uint16` big-endian) and the measured power at 1 m (`sint8`, dBm).
public enum IBeaconDecoder {
    /// Apple's company identifier.
    public static let company: UInt16 = 0x004C

    /// Whether `data` (after the company id) announces an iBeacon (`02 15`).
    public static func matches(_ data: [UInt8]) -> Bool {
        data.count >= 2 && data[0] == 0x02 && data[1] == 0x15
    }

    /// The readings `uuid`, `major`, `minor` and `measured_power`.
    ///
    /// - Throws: ``DecodeFailure/ibeaconLength(_:)`` unless the data is 23 bytes.
    public static func decode(_ data: [UInt8]) throws(DecodeFailure) -> [Reading] {
        guard data.count == 23 else { throw .ibeaconLength(data.count) }
        let uuid = hexString(data[2..<18])
        let parts = [
            uuid.prefix(8), uuid.dropFirst(8).prefix(4), uuid.dropFirst(12).prefix(4),
            uuid.dropFirst(16).prefix(4), uuid.dropFirst(20),
        ]
        return [
            Reading(name: "uuid", value: .text(parts.joined(separator: "-"))),
            Reading(name: "major", value: .number(Double(UInt16(data[18]) << 8 | UInt16(data[19])))),
            Reading(name: "minor", value: .number(Double(UInt16(data[20]) << 8 | UInt16(data[21])))),
            Reading(name: "measured_power", value: .number(Double(Int8(bitPattern: data[22]))), unit: "dBm"),
        ]
    }
}

/// Google Eddystone: service data of UUID 0xFEAA, one frame per
/// advertisement (github.com/google/eddystone, protocol-specification.md):
/// UID (0x00), URL (0x10), unencrypted TLM (0x20), EID (0x30).
public enum EddystoneDecoder {
    /// The frame's readings:
    /// - UID: `tx_power` (dBm at 0 m), `namespace` (10 bytes hex), `instance` (6 bytes hex);
    /// - URL: `tx_power`, `url`;
    /// - TLM: `voltage` (V; absent when 0, not supported), `temperature` (°C; absent for 0x8000),
    ///   `advertisements` (PDUs since boot), `uptime` (s);
    /// - EID: `tx_power`, `eid` (8 bytes hex).
    ///
    /// - Throws: ``DecodeFailure`` for an unknown frame type, a wrong length,
    ///   a malformed URL or an encrypted TLM frame.
    public static func decode(_ data: [UInt8]) throws(DecodeFailure) -> [Reading] {
        guard let type = data.first else { throw .eddystoneLength(0, 0) }
        switch type {
        case 0x00:
            // 18 bytes, or 20 with the two reserved bytes (the specification's full length).
            guard data.count == 18 || data.count == 20 else { throw .eddystoneLength(type, data.count) }
            return [
                txPower(data[1]), Reading(name: "namespace", value: .text(hexString(data[2..<12]))),
                Reading(name: "instance", value: .text(hexString(data[12..<18]))),
            ]
        case 0x10:
            guard (3...20).contains(data.count) else { throw .eddystoneLength(type, data.count) }
            return [txPower(data[1]), Reading(name: "url", value: .text(try url(data[2...])))]
        case 0x20:
            guard data.count >= 2 else { throw .eddystoneLength(type, data.count) }
            guard data[1] == 0 else { throw .eddystoneTLMVersion(data[1]) }
            guard data.count == 14 else { throw .eddystoneLength(type, data.count) }
            let millivolts = bigEndian(data[2..<4])
            let temperature = Int16(bitPattern: UInt16(bigEndian(data[4..<6])))
            var readings: [Reading] = []
            if millivolts != 0 {
                readings.append(Reading(name: "voltage", value: .number(Double(millivolts) / 1000), unit: "V"))
            }
            if temperature != Int16.min {
                readings.append(Reading(name: "temperature", value: .number(Double(temperature) / 256), unit: "°C"))
            }
            readings.append(Reading(name: "advertisements", value: .number(Double(bigEndian(data[6..<10])))))
            readings.append(Reading(name: "uptime", value: .number(Double(bigEndian(data[10..<14])) / 10), unit: "s"))
            return readings
        case 0x30:
            guard data.count == 10 else { throw .eddystoneLength(type, data.count) }
            return [txPower(data[1]), Reading(name: "eid", value: .text(hexString(data[2..<10])))]
        default:
            throw .eddystoneFrame(type)
        }
    }

    private static let schemes = ["http://www.", "https://www.", "http://", "https://"]
    private static let expansions = [
        ".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/", ".com", ".org", ".edu", ".net", ".info",
        ".biz", ".gov",
    ]

    /// The URL from the scheme byte and the encoded bytes.
    static func url(_ encoded: ArraySlice<UInt8>) throws(DecodeFailure) -> String {
        guard let scheme = encoded.first, Int(scheme) < schemes.count else { throw .eddystoneURL }
        var text = schemes[Int(scheme)]
        for byte in encoded.dropFirst() {
            if Int(byte) < expansions.count {
                text += expansions[Int(byte)]
            } else if (0x21...0x7E).contains(byte) {
                text.append(Character(Unicode.Scalar(byte)))
            } else {
                throw .eddystoneURL
            }
        }
        return text
    }

    private static func txPower(_ byte: UInt8) -> Reading {
        Reading(name: "tx_power", value: .number(Double(Int8(bitPattern: byte))), unit: "dBm")
    }

    private static func bigEndian(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }
}
