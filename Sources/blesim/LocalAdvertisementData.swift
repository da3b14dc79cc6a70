import DBus
import GATT
import SimCore

/// An LEAdvertisement1's `SolicitUUIDs` and `Data`, as bluetoothd 5.66's advertising.c
/// (`parse_solicit_uuids`, `parse_data`) and src/shared/ad.c put them in the advertising data.
extension LocalObjectsParser {
    /// AD types `Data` may not carry: those bluetoothd builds itself (ad.c's `type_reject_list`).
    static let rejectedDataTypes: Set<UInt8> = [
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12, 0x14, 0x15,
        0x16, 0x17, 0x18, 0x19, 0x1A, 0x1B, 0x1C, 0x1D, 0x1E, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x27, 0x28, 0x29, 0x2A,
        0x2B, 0x3D, 0xFF,
    ]

    /// `SolicitUUIDs` (`as`): lists of 16-bit (0x14), 32-bit (0x1F) and 128-bit (0x15)
    /// solicitation UUIDs, each in its shortest width.
    static func solicitStructures(_ value: DBusValue?) throws(BlueZError) -> [RawADStructure] {
        guard let value else { return [] }
        guard let items = value.arrayValue else { throw badAdvertisement }
        var lists: [BluetoothUUID.Width: [UInt8]] = [:]
        for item in items {
            guard let text = item.stringValue, let uuid = BluetoothUUID(text) else { throw badAdvertisement }
            let width = uuid.shortestWidth
            lists[width, default: []] += uuid.littleEndianBytes(width: width) ?? uuid.littleEndianBytes
        }
        let types: [(BluetoothUUID.Width, UInt8)] = [(.bits16, 0x14), (.bits32, 0x1F), (.bits128, 0x15)]
        return types.compactMap { width, type in lists[width].map { RawADStructure(type: type, data: $0) } }
    }

    /// `Data` (`a{yv}`, each value `ay`): one AD structure per entry; a type bluetoothd builds
    /// itself, or more than 29 bytes, does not parse.
    static func dataStructures(_ value: DBusValue?) throws(BlueZError) -> [RawADStructure] {
        guard let value else { return [] }
        guard let entries = value.dictionaryEntries else { throw badAdvertisement }
        var out: [RawADStructure] = []
        for entry in entries {
            guard case .byte(let type) = entry.key.unwrapped, let bytes = entry.value.bytesValue,
                bytes.count <= 29, !rejectedDataTypes.contains(type)
            else { throw badAdvertisement }
            out.removeAll { $0.type == type }  // ad.c's ad_replace_data
            out.append(RawADStructure(type: type, data: bytes))
        }
        return out
    }
}
