import GATT

extension Advertisement {
    /// Room in one legacy advertising PDU (AdvData or ScanRspData), bytes.
    public static let legacyPayload = 31

    /// This advertisement as the shared AD model (`GATT.AdvertisingData`).
    public var advertisingData: AdvertisingData {
        AdvertisingData(
            flags: flags.map { AdvertisingFlags(rawValue: $0) }, serviceUUIDs: serviceUUIDs, localName: name,
            isCompleteName: nameIsComplete, txPower: txPower, appearance: appearance,
            serviceData: OrderedMap(serviceData.map { ($0.uuid, $0.data) }),
            manufacturerData: OrderedMap(manufacturerData.map { ($0.company, $0.data) }))
    }

    /// Why this advertisement could not be sent by a legacy advertiser, or nil when it can:
    /// its AD structures must fit in the advertising data and the scan response, 31 bytes each
    /// (a real device puts what does not fit in the first into the second).
    public var sizeProblem: String? {
        let sizes: [Int]
        do {
            sizes = try advertisingData.structures().map(\.encodedLength) + rawStructures.map(\.encodedLength)
        } catch {
            return "\(error)"
        }
        var rooms = [Self.legacyPayload, Self.legacyPayload]
        for size in sizes.sorted(by: >) {
            guard let index = rooms.firstIndex(where: { $0 >= size }) else {
                let total = sizes.reduce(0, +)
                return "\(total) bytes of AD structures (\(sizes.map(String.init).joined(separator: " + "))) "
                    + "do not fit in advertising data and scan response (31 + 31 bytes)"
            }
            rooms[index] -= size
        }
        return nil
    }
}
