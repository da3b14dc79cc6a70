/// One advertisement as an adapter receives it: who sent it, how strong, and what it said
/// (advertising data and scan response merged, as the kernel's Device Found event carries them).
public struct AdvertisingReport: Sendable, Equatable {
    /// The sender's address.
    public var address: DeviceAddress
    /// The sender's address type.
    public var addressType: AddressType
    /// Received signal strength, dBm.
    public var rssi: Int16
    /// Whether the advertisement was connectable.
    public var connectable: Bool
    /// What it carried.
    public var advertisement: Advertisement

    /// A report.
    public init(
        address: DeviceAddress, addressType: AddressType, rssi: Int16, connectable: Bool,
        advertisement: Advertisement
    ) {
        self.address = address
        self.addressType = addressType
        self.rssi = rssi
        self.connectable = connectable
        self.advertisement = advertisement
    }
}
