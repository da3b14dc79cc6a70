import GATT

extension PaymentTerminalProfile {
    /// The longest local name a terminal advertises: what fits a legacy scan
    /// response whole (31 bytes less the 2-byte AD header).
    public static let maximumLocalNameLength = 29

    /// What a terminal advertises: flags (LE General Discoverable, no
    /// BR/EDR) and the service UUID (21 of the 31 legacy bytes), with its
    /// local name in the scan response, so a 29-byte name never pushes the
    /// service UUID that scanners filter on out of the advertisement.
    public static func advertisement(
        localName: String
    ) throws(PaymentTerminalValueError)
        -> (advertising: AdvertisingData, scanResponse: AdvertisingData)
    {
        guard !localName.isEmpty, localName.utf8.count <= maximumLocalNameLength else {
            throw PaymentTerminalValueError(field: "name", "must be 1 to \(maximumLocalNameLength) bytes of UTF-8")
        }
        return (
            AdvertisingData(flags: .leGeneralDiscoverable, serviceUUIDs: [serviceUUID]),
            AdvertisingData(localName: localName)
        )
    }

    /// Whether advertising data (an advertisement merged with its scan
    /// response, as BlueZ reports a device) announces a payment terminal.
    public static func announcesTerminal(_ data: AdvertisingData) -> Bool {
        data.serviceUUIDs.contains(serviceUUID)
    }
}
