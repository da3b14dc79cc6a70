import DBus
import GATT
import SimCore

/// What the adapters' controllers offer for advertising, as bluetoothd 5.66
/// reads it from the kernel (MGMT Read Advertising Features) and serves it on
/// LEAdvertisingManager1 (src/advertising.c): `SupportedSecondaryChannels`
/// exists only on a controller that does LE extended advertising
/// (`secondary_exists`); `SupportedFeatures` and `SupportedCapabilities`
/// (MaxAdvLen, MaxScnRspLen) only with `-E` (here `--experimental`).
/// `--extended-advertising` makes every adapter such a controller: 1M and 2M
/// secondary channels, 251 bytes of advertising data; otherwise 31.
struct AdvertisingFeatures: Sendable {
    /// The controllers do LE extended advertising.
    var extended: Bool
    /// Serve the experimental properties (`bluetoothd -E`).
    var experimental: Bool

    /// The controller's advertising data length (the kernel's max_adv_data_len).
    var maxAdvLen: Int { extended ? 251 : Advertisement.legacyPayload }

    /// The secondary channels offered (bluetoothd's `append_secondary`).
    var secondaryChannels: [String] { extended ? ["1M", "2M"] : [] }

    /// The extra LEAdvertisingManager1 properties.
    func properties() throws -> [ExportedProperty] {
        // Declared either way; absent (no value) on a legacy-only controller, as advertising.c's
        // `secondary_exists` makes it.
        var result: [ExportedProperty] = [
            try ExportedProperty(
                "SupportedSecondaryChannels", type: .array(.string), access: .read,
                value: extended ? .array(.string, secondaryChannels.map(DBusValue.string)) : nil)
        ]
        if experimental {
            result.append(
                try ExportedProperty(
                    "SupportedFeatures", type: .array(.string), access: .read, value: .array(.string, [])))
            let length = DBusValue.byte(UInt8(maxAdvLen))
            result.append(
                try ExportedProperty(
                    "SupportedCapabilities", type: .dictionary(key: .string, value: .variant), access: .read,
                    value: .dictionary(
                        key: .string, value: .variant,
                        [
                            (key: .string("MaxAdvLen"), value: .variant(length)),
                            (key: .string("MaxScnRspLen"), value: .variant(length)),
                        ])))
        }
        return result
    }

    /// bluetoothd's checks of an advertisement with a `SecondaryChannel`
    /// (extended PDUs): the channel must be one the controller offers
    /// (`parse_secondary`), and the advertising data (Flags, TX power,
    /// appearance, every structure, and the local name when connectable: it
    /// goes in the scan response otherwise) must fit the controller's length
    /// (`refresh_advertisement`). Both fail as bluetoothd does: Failed
    /// "Failed to parse advertisement.". Returns it marked extended.
    /// Without a SecondaryChannel it is returned as it is, for SimWorld's
    /// legacy 31 + 31-byte fit (on an extended controller the real stack
    /// refuses such data only later, in the kernel, with another message).
    func check(
        _ advertisement: LocalAdvertisement, properties: [String: DBusValue]
    ) throws(BlueZError)
        -> LocalAdvertisement
    {
        let failure = BlueZError(.failed, "Failed to parse advertisement.")
        guard let channel = properties["SecondaryChannel"] else { return advertisement }
        guard let name = channel.stringValue, secondaryChannels.contains(name) else { throw failure }
        var data = advertisement.advertisement
        if !advertisement.connectable { data.name = nil }
        let length: Int
        do {
            length =
                try data.advertisingData.structures().map(\.encodedLength).reduce(0, +)
                + data.rawStructures.map(\.encodedLength).reduce(0, +)
        } catch {
            throw failure
        }
        guard length <= maxAdvLen else { throw failure }
        var extended = advertisement
        extended.extended = true
        return extended
    }
}
