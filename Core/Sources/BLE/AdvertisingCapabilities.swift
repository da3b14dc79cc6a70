/// What an adapter offers for advertising, as bluetoothd 5.66 serves it on
/// LEAdvertisingManager1: `SupportedSecondaryChannels` exists only when the
/// controller does LE extended advertising (bluetoothd's `secondary_exists`:
/// the 1M secondary PHY), and, with `bluetoothd -E`,
/// `SupportedCapabilities["MaxAdvLen"]` gives the controller's advertising
/// data length (31 legacy, 251 extended).
public struct AdvertisingCapabilities: Sendable, Hashable {
    /// Whether an advertisement may use extended advertising PDUs
    /// (`SecondaryChannel`), and so carry more than 31 bytes.
    public var extendedAdvertising: Bool
    /// The longest advertising data the adapter takes, Flags included.
    public var maximumDataLength: Int

    /// Capabilities with the given fields.
    public init(extendedAdvertising: Bool, maximumDataLength: Int) {
        self.extendedAdvertising = extendedAdvertising
        self.maximumDataLength = maximumDataLength
    }

    /// A legacy-only adapter: 31 bytes.
    public static let legacy = AdvertisingCapabilities(extendedAdvertising: false, maximumDataLength: 31)

    /// From LEAdvertisingManager1's properties: `secondaryChannels` is
    /// `SupportedSecondaryChannels` (nil when absent), `maxAdvLen` is
    /// `SupportedCapabilities["MaxAdvLen"]` (nil when absent). Extended when a
    /// secondary channel is offered or MaxAdvLen exceeds 31; the length is
    /// MaxAdvLen when given, else 251 for extended (the kernel's
    /// HCI_MAX_EXT_AD_LENGTH) and 31 otherwise.
    public init(secondaryChannels: [String]?, maxAdvLen: Int?) {
        let extended = !(secondaryChannels ?? []).isEmpty || (maxAdvLen ?? 0) > 31
        let length = maxAdvLen ?? (extended ? 251 : 31)
        self.init(extendedAdvertising: extended && length > 31, maximumDataLength: min(max(length, 0), 251))
    }
}

extension PeripheralBackend {
    /// Legacy only, for backends that cannot tell.
    public func advertisingCapabilities(adapter: String) async throws(BLEError) -> AdvertisingCapabilities {
        .legacy
    }
}
