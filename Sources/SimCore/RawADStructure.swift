/// An AD structure carried as it is: what an LEAdvertisement1's `SolicitUUIDs` and `Data` add to
/// the advertising data (bluetoothd 5.66's src/shared/ad.c). Scenario devices have none.
public struct RawADStructure: Sendable, Equatable {
    /// The AD type, for example 0x14 (List of 16-bit Service Solicitation UUIDs).
    public var type: UInt8
    /// The bytes after the type.
    public var data: [UInt8]

    /// A structure.
    public init(type: UInt8, data: [UInt8]) {
        self.type = type
        self.data = data
    }

    /// Bytes it takes in an advertising PDU: length, type, data.
    public var encodedLength: Int { 2 + data.count }
}
