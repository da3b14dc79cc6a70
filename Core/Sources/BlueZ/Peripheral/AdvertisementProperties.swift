import DBus
import GATT

/// The LEAdvertisement1 properties (doc/advertising-api.txt) for an
/// ``AdvertisingData``: `Type` "peripheral", `ServiceUUIDs`,
/// `ManufacturerData` (a{qv}), `ServiceData` (a{sv}), `LocalName`,
/// `Appearance`, `Discoverable` (unless the data's flags say otherwise), and `Includes` ["tx-power"] with `TxPower`
/// (the requested level) when the data carries a TX power. `extended` asks for
/// an extended advertising PDU with `SecondaryChannel` "1M"
/// (src/advertising.c `parse_secondary`). Pure.
public enum AdvertisementProperties {
    /// The properties, in a stable order.
    public static func properties(of data: AdvertisingData, extended: Bool) -> [(String, DBusValue)] {
        var result: [(String, DBusValue)] = [("Type", .string("peripheral"))]
        if !data.serviceUUIDs.isEmpty {
            result.append(("ServiceUUIDs", .array(.string, data.serviceUUIDs.map { .string($0.uuidString) })))
        }
        if !data.manufacturerData.isEmpty {
            let entries = data.manufacturerData.map {
                (key: DBusValue.uint16($0.key), value: DBusValue.variant(.bytes($0.value)))
            }
            result.append(("ManufacturerData", .dictionary(key: .uint16, value: .variant, entries)))
        }
        if !data.serviceData.isEmpty {
            let entries = data.serviceData.map {
                (key: DBusValue.string($0.key.uuidString), value: DBusValue.variant(.bytes($0.value)))
            }
            result.append(("ServiceData", .dictionary(key: .string, value: .variant, entries)))
        }
        if let name = data.localName { result.append(("LocalName", .string(name))) }
        if let appearance = data.appearance { result.append(("Appearance", .uint16(appearance))) }
        let discoverable =
            data.flags.map { !$0.isDisjoint(with: [.generalDiscoverable, .limitedDiscoverable]) } ?? true
        result.append(("Discoverable", .boolean(discoverable)))
        if let power = data.txPower {
            result.append(("Includes", .array(.string, [.string("tx-power")])))
            result.append(("TxPower", .int16(Int16(power))))
        }
        if extended { result.append(("SecondaryChannel", .string("1M"))) }
        return result
    }
}
