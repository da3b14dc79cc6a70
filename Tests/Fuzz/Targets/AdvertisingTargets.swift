import GATT
import PaymentTerminalProfile

/// Advertising data as a controller receives it from the air, and what the
/// agent's readers take from it: BTHome service data, the payment
/// terminal's announcement.
///
/// Checks: data the parser accepts encodes (when it fits 251 bytes) to bytes
/// that parse and encode to the same bytes again: the parser and the encoder
/// agree on every field.
enum AdvertisingTarget {
    static let target = FuzzTarget(
        name: "advertising", summary: "advertising data (AD structures) and the BTHome service data inside",
        seeds: { seeds }, body: run)

    static func run(_ input: [UInt8]) throws(FuzzFinding) {
        guard let data = try? AdvertisingData.parse(input) else { return }
        _ = PaymentTerminalProfile.announcesTerminal(data)
        if let bthome = data.serviceData[.bthome] { try BTHomeTarget.run(bthome) }
        guard let encoded = try? data.encode(limit: .extended) else { return }
        let reparsed: AdvertisingData
        do {
            reparsed = try AdvertisingData.parse(encoded)
        } catch {
            throw FuzzFinding("\(data) encodes to \(encoded), which does not parse: \(error)")
        }
        let again: [UInt8]
        do {
            again = try reparsed.encode(limit: .extended)
        } catch {
            throw FuzzFinding("\(reparsed), read back from \(encoded), does not encode: \(error)")
        }
        try require(again == encoded, "\(data) encodes to \(encoded), read back it encodes to \(again)")
    }

    static let seeds: [[UInt8]] = [
        // Flags, complete 16-bit UUIDs 0x181A, BTHome service data, complete name "aggr".
        [
            0x02, 0x01, 0x06, 0x03, 0x03, 0x1A, 0x18, 0x0D, 0x16, 0xD2, 0xFC, 0x40, 0x01, 0x57, 0x02, 0x0A, 0x09, 0x03,
            0x39, 0x12, 0x05, 0x09, 0x61, 0x67, 0x67, 0x72,
        ],
        // The payment terminal: flags and its 128-bit service UUID; the scan response's shortened name.
        [0x02, 0x01, 0x06, 0x11, 0x07] + (PaymentTerminalProfile.serviceUUID.littleEndianBytes(width: .bits128) ?? [])
            + [0x05, 0x08, 0x50, 0x4F, 0x53, 0x31],
        // Tx power, appearance, manufacturer data (Apple), 32-bit service data, an unmodelled URI, padding.
        [
            0x02, 0x0A, 0xF4, 0x03, 0x19, 0x41, 0x03, 0x06, 0xFF, 0x4C, 0x00, 0x02, 0x15, 0x01, 0x07, 0x20, 0x78, 0x56,
            0x34, 0x12, 0xAA, 0xBB, 0x04, 0x24, 0x17, 0x2F, 0x2F, 0x00, 0x00,
        ],
        // Incomplete lists of each width, a name that is not UTF-8, a length past the end.
        [0x03, 0x02, 0x0D, 0x18, 0x05, 0x04, 0x01, 0x02, 0x03, 0x04, 0x04, 0x09, 0xC3, 0x28, 0x41, 0x05, 0x16, 0x0F],
    ]
}

/// BTHome v2 service data (the bytes after UUID 0xFCD2), as the sensor
/// readers decode it.
///
/// Checks: decoded objects encode back to the input, once the objects are in
/// the order the encoder writes them (which decoding enforces).
enum BTHomeTarget {
    static let target = FuzzTarget(
        name: "bthome", summary: "BTHome v2 service data: decode, encode back", seeds: { seeds }, body: run)

    static func run(_ input: [UInt8]) throws(FuzzFinding) {
        guard let decoded = try? BTHomeServiceData.decode(input) else { return }
        for object in decoded.objects { _ = object.value }
        guard !decoded.deviceInfo.hasMACAddress else { return }
        let encoded: [UInt8]
        do {
            encoded = try decoded.encode()
        } catch {
            throw FuzzFinding("\(decoded), decoded from \(input), does not encode: \(error)")
        }
        try require(encoded == input, "\(input) decodes to \(decoded), which encodes to \(encoded)")
    }

    static let seeds: [[UInt8]] = [
        [0x40, 0x01, 0x57, 0x02, 0x0A, 0x09, 0x03, 0x39, 0x12, 0x04, 0xC5, 0x8B, 0x01],
        [0x44, 0x00, 0x07, 0x02, 0xF6, 0xFF],
        [0x42, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x01, 0x64],
        [0x40, 0x02, 0x0A, 0x09, 0x01, 0x57],
        [0x41, 0x01],
        [0x40, 0x05, 0x00, 0x00, 0x00],
    ]
}
