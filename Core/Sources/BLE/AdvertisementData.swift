import GATT

/// What a discovered peripheral advertises, like Core Bluetooth's
/// advertisement-data dictionary as a typed value. Built from BlueZ
/// Device1 properties with ``init(device1:)``.
public struct AdvertisementData: Hashable, Sendable {
    /// The local name: Device1.Name, else Device1.Alias when it is not just
    /// the address BlueZ makes up for unnamed devices.
    public var localName: String?
    /// Advertised (and, once connected, resolved) service UUIDs (Device1.UUIDs).
    public var serviceUUIDs: [BluetoothUUID]
    /// Manufacturer-specific data by company identifier (Device1.ManufacturerData `a{qv}`).
    public var manufacturerData: OrderedMap<UInt16, [UInt8]>
    /// Service data by service UUID (Device1.ServiceData `a{sv}`).
    public var serviceData: OrderedMap<BluetoothUUID, [UInt8]>
    /// The advertised TX power level in dBm (Device1.TxPower).
    public var txPower: Int?
    /// Whether the device accepts connections. BlueZ does not report the PDU
    /// type; a device is taken as connectable unless its advertising flags
    /// (Device1.AdvertisingFlags) are present and mark it non-discoverable
    /// broadcaster-only, which is the best BlueZ exposes. nil when unknown.
    public var isConnectable: Bool?

    /// Advertisement data with the given contents.
    public init(
        localName: String? = nil, serviceUUIDs: [BluetoothUUID] = [],
        manufacturerData: OrderedMap<UInt16, [UInt8]> = [:], serviceData: OrderedMap<BluetoothUUID, [UInt8]> = [:],
        txPower: Int? = nil, isConnectable: Bool? = nil
    ) {
        self.localName = localName
        self.serviceUUIDs = serviceUUIDs
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.txPower = txPower
        self.isConnectable = isConnectable
    }

    /// Extracts the advertisement from a Device1 property map. Malformed
    /// entries (a UUID that does not parse, a company id out of range, a value
    /// that is not bytes) are skipped, never fatal: they come from the air.
    /// Manufacturer data is ordered by company id and service data by UUID,
    /// so the same properties always give an equal value.
    public init(device1 properties: PropertyMap) {
        self.init()
        update(device1: properties, keys: Self.device1Keys)
    }

    /// The Device1 properties the advertisement is read from.
    static let device1Keys = [
        "Name", "UUIDs", "ManufacturerData", "ServiceData", "TxPower", "AdvertisingFlags",
    ]

    /// Reads again the fields that depend on the Device1 properties `keys`
    /// (the others are kept), as ``init(device1:)`` reads them.
    mutating func update(device1 properties: PropertyMap, keys: [String]) {
        for key in keys {
            switch key {
            case "Name", "Alias", "Address":
                let address = properties["Address"]?.stringValue
                if let name = properties["Name"]?.stringValue {
                    localName = name
                } else if let alias = properties["Alias"]?.stringValue, !Self.isMadeUpAlias(alias, address: address) {
                    localName = alias
                } else {
                    localName = nil
                }
            case "UUIDs":
                serviceUUIDs = (properties["UUIDs"]?.stringsValue ?? []).compactMap { BluetoothUUID($0) }
            case "ManufacturerData":
                let entries = properties["ManufacturerData"]?.dictionaryValue ?? [:]
                let pairs = entries.compactMap { key, value -> (UInt16, [UInt8])? in
                    guard let id = key.intValue, let company = UInt16(exactly: id), let bytes = value.bytesValue
                    else { return nil }
                    return (company, bytes)
                }
                manufacturerData = OrderedMap(pairs.sorted { $0.0 < $1.0 })
            case "ServiceData":
                let entries = properties["ServiceData"]?.dictionaryValue ?? [:]
                let pairs = entries.compactMap { key, value -> (BluetoothUUID, [UInt8])? in
                    guard let text = key.stringValue, let uuid = BluetoothUUID(text), let bytes = value.bytesValue
                    else { return nil }
                    return (uuid, bytes)
                }
                serviceData = OrderedMap(pairs.sorted { $0.0 < $1.0 })
            case "TxPower":
                txPower = properties["TxPower"]?.intValue.map { Int($0) }
            case "AdvertisingFlags":
                isConnectable = properties["AdvertisingFlags"]?.bytesValue?.first.map(Self.isConnectable(flags:))
            default:
                break
            }
        }
    }

    /// Whether advertising flags (the first byte of Device1.AdvertisingFlags) mark a connectable device: one
    /// in general or limited discoverable mode.
    static func isConnectable(flags: UInt8) -> Bool {
        !AdvertisingFlags(rawValue: flags).isDisjoint(with: [.generalDiscoverable, .limitedDiscoverable])
    }

    /// BlueZ sets Alias to the address with ':' replaced by '-' when a device
    /// has no name.
    static func isMadeUpAlias(_ alias: String, address: String?) -> Bool {
        guard let address else { return false }
        return alias.uppercased() == address.uppercased().replacingColons()
    }
}

extension String {
    fileprivate func replacingColons() -> String {
        String(map { $0 == ":" ? "-" : $0 })
    }
}
