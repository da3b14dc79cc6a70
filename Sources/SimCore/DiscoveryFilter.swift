import GATT

/// The transports a scan covers (BlueZ's scan type bits).
public struct ScanTypes: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    /// A scan type from its bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// BR/EDR inquiry.
    public static let bredr = ScanTypes(rawValue: 1 << 0)
    /// LE scan.
    public static let le = ScanTypes(rawValue: 1 << 1)
    /// Both, interleaved: what a dual-mode controller does for "auto".
    public static let dual: ScanTypes = [.bredr, .le]
}

/// One value of the `a{sv}` dictionary given to `Adapter1.SetDiscoveryFilter`, as the shell
/// decoded it; anything of another D-Bus type is `.other` with its signature.
public enum FilterArgument: Sendable, Equatable {
    /// `s`
    case string(String)
    /// `n`
    case int16(Int16)
    /// `q`
    case uint16(UInt16)
    /// `b`
    case bool(Bool)
    /// `as`
    case strings([String])
    /// any other type, by signature
    case other(signature: String)
}

/// One client's discovery filter, as `Adapter1.SetDiscoveryFilter` sets it (BlueZ 5.66).
public struct DiscoveryFilter: Sendable, Equatable {
    /// Service UUIDs; empty matches any device.
    public var uuids: [BluetoothUUID]
    /// RSSI threshold, dBm (-127...20).
    public var rssi: Int16?
    /// Pathloss threshold, dB (at most 137).
    public var pathloss: UInt16?
    /// Transports to scan.
    public var transport: ScanTypes
    /// `DuplicateData`: report every advertisement's ManufacturerData and ServiceData again.
    /// bluetoothd 5.66 defaults it to false once a filter is set (its documentation says true).
    public var duplicateData: Bool
    /// Make the adapter discoverable while discovering.
    public var discoverable: Bool
    /// Prefix of the address (`AA:BB:...`) or of the advertised name; "" matches any device.
    public var pattern: String?

    /// The keys `GetDiscoveryFilters` returns, in bluetoothd's order.
    public static let keys = ["UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern"]

    /// Largest accepted `Pathloss`.
    public static let maximumPathloss: UInt16 = 137

    /// A filter with bluetoothd's defaults for an adapter scanning `transport`.
    public init(transport: ScanTypes) {
        uuids = []
        rssi = nil
        pathloss = nil
        self.transport = transport
        duplicateData = false
        discoverable = false
        pattern = nil
    }

    /// Parses a SetDiscoveryFilter dictionary as bluetoothd does: nil for an empty dictionary
    /// (which removes the client's filter); `org.bluez.Error.InvalidArguments` for an unknown
    /// key, a value of the wrong type, a bad UUID, an RSSI outside -127...20, a Pathloss above
    /// 137, a Transport other than "auto", "le" or "bredr", or both RSSI and Pathloss.
    /// `adapterTransport` is what "auto" (and no Transport) means on this adapter.
    public static func parse(
        _ entries: [(key: String, value: FilterArgument)], adapterTransport: ScanTypes
    ) throws(BlueZError) -> DiscoveryFilter? {
        guard !entries.isEmpty else { return nil }
        var filter = DiscoveryFilter(transport: adapterTransport)
        for (key, value) in entries {
            try filter.apply(key: key, value: value)
        }
        if filter.rssi != nil, filter.pathloss != nil { throw BluetoothdError.invalidArguments }
        return filter
    }

    private mutating func apply(key: String, value: FilterArgument) throws(BlueZError) {
        switch (key, value) {
        case ("UUIDs", .strings(let texts)):
            for text in texts {
                guard let uuid = BluetoothUUID(text) else { throw BluetoothdError.invalidArguments }
                uuids.append(uuid)
            }
        case ("RSSI", .int16(let value)):
            guard (-127...20).contains(value) else { throw BluetoothdError.invalidArguments }
            rssi = value
        case ("Pathloss", .uint16(let value)):
            guard value <= Self.maximumPathloss else { throw BluetoothdError.invalidArguments }
            pathloss = value
        case ("Transport", .string("bredr")): transport = .bredr
        case ("Transport", .string("le")): transport = .le
        case ("Transport", .string("auto")): break
        case ("DuplicateData", .bool(let value)): duplicateData = value
        case ("Discoverable", .bool(let value)): discoverable = value
        case ("Pattern", .string(let value)): pattern = value
        default: throw BluetoothdError.invalidArguments
        }
    }
}
