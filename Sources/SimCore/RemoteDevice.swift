import GATT

/// A Device1 object as bluetoothd keeps it: what it learnt from advertisements, and its state.
public struct RemoteDevice: Sendable, Equatable {
    /// Its address.
    public let address: DeviceAddress
    /// Its address type.
    public let addressType: AddressType
    /// The advertised name, once known.
    public var name: String?
    /// The alias a client set, if any.
    public var alias: String?
    /// Last reported RSSI; nil when unknown (BlueZ's 0), then the property is absent.
    public var rssi: Int16?
    /// Advertised TX power; nil when unknown (BlueZ's 127).
    public var txPower: Int16?
    /// Service UUIDs seen in its advertisements, first seen first.
    public var uuids: [BluetoothUUID] = []
    /// Manufacturer data as bluetoothd accumulates it.
    public var manufacturerData: [ManufacturerDatum] = []
    /// Service data as bluetoothd accumulates it.
    public var serviceData: [ServiceDatum] = []
    /// Advertised appearance.
    public var appearance: UInt16?
    /// Advertised flags.
    public var advertisingFlags: UInt8?
    /// `Connected`.
    public var connected = false
    /// `Paired`.
    public var paired = false
    /// `Bonded`.
    public var bonded = false
    /// `Trusted`.
    public var trusted = false
    /// `Blocked`.
    public var blocked = false
    /// `LegacyPairing`.
    public var legacyPairing = false
    /// `ServicesResolved`.
    public var servicesResolved = false
    /// Whether the object goes away when not seen for `TemporaryTimeout` (every discovered
    /// device is, until paired or trusted).
    public var temporary = true
    /// Whether its last advertisement was connectable.
    public var connectable = true
    /// When the temporary timer fires, if it runs.
    public var expiry: SimInstant?

    /// A device never seen before.
    public init(address: DeviceAddress, addressType: AddressType) {
        self.address = address
        self.addressType = addressType
    }

    /// `Alias`: the alias, else the name, else the address with dashes.
    public var displayAlias: String { alias ?? name ?? address.dashed }

    /// Every present Device1 property, in bluetoothd's table order (for InterfacesAdded and
    /// GetAll). `adapterPath` is the owning adapter's object path; `experimental` adds the
    /// properties bluetoothd shows only when started with `-E` (AdvertisingFlags).
    public func properties(adapterPath: String, experimental: Bool = false) -> [Property] {
        var list: [Property] = [
            Property("Address", .string(address.description)),
            Property("AddressType", .string(addressType.rawValue)),
        ]
        if let name { list.append(Property("Name", .string(name))) }
        list.append(Property("Alias", .string(displayAlias)))
        if let appearance { list.append(Property("Appearance", .uint16(appearance))) }
        list += [
            Property("Paired", .bool(paired)), Property("Bonded", .bool(bonded)),
            Property("Trusted", .bool(trusted)), Property("Blocked", .bool(blocked)),
            Property("LegacyPairing", .bool(legacyPairing)),
        ]
        if let rssi { list.append(Property("RSSI", .int16(rssi))) }
        list += [
            Property("Connected", .bool(connected)), Property("UUIDs", .strings(uuids.map(\.uuidString))),
            Property("Adapter", .objectPath(adapterPath)),
        ]
        if !manufacturerData.isEmpty { list.append(Property("ManufacturerData", .manufacturerData(manufacturerData))) }
        if !serviceData.isEmpty { list.append(Property("ServiceData", .serviceData(serviceData))) }
        if let txPower { list.append(Property("TxPower", .int16(txPower))) }
        list.append(Property("ServicesResolved", .bool(servicesResolved)))
        if experimental, let advertisingFlags { list.append(Property("AdvertisingFlags", .bytes([advertisingFlags]))) }
        return list
    }

    /// The names of the properties `properties(adapterPath:)` can list.
    public static let propertyNames: Set<String> = [
        "Address", "AddressType", "Name", "Alias", "Appearance", "Paired", "Bonded", "Trusted", "Blocked",
        "LegacyPairing", "RSSI", "Connected", "UUIDs", "Adapter", "ManufacturerData", "ServiceData", "TxPower",
        "ServicesResolved", "AdvertisingFlags",
    ]
}
