import GATT

/// What a discovered peripheral advertises, like Core Bluetooth's
/// advertisement-data dictionary as a typed value. Built from BlueZ
/// Device1 properties with ``init(device1:)``.
///
/// The fields live in one shared, immutable box: a copy of the value (each
/// advertisement report passes one from the mirror through every scan's queue
/// to its consumer) costs one reference count, however much the peripheral
/// advertises. Setting a field replaces the box.
public struct AdvertisementData: Hashable, Sendable {
    /// The fields, compared and hashed as the value.
    private struct Fields: Hashable, Sendable {
        var localName: String?
        var serviceUUIDs: [BluetoothUUID] = []
        var manufacturerData: OrderedMap<UInt16, [UInt8]> = [:]
        var serviceData: OrderedMap<BluetoothUUID, [UInt8]> = [:]
        var txPower: Int?
        var isConnectable: Bool?
    }

    /// Holds the fields; never changed once made, so values share it freely.
    private final class Box: Sendable {
        let fields: Fields
        init(_ fields: Fields) { self.fields = fields }

        /// The box of the empty advertisement, shared by every empty value.
        static let empty = Box(Fields())
    }

    private var box: Box

    private var fields: Fields {
        get { box.fields }
        set { box = Box(newValue) }
    }

    /// The local name: Device1.Name, else Device1.Alias when it is not just
    /// the address BlueZ makes up for unnamed devices.
    public var localName: String? {
        get { box.fields.localName }
        set { fields.localName = newValue }
    }
    /// Advertised (and, once connected, resolved) service UUIDs (Device1.UUIDs).
    public var serviceUUIDs: [BluetoothUUID] {
        get { box.fields.serviceUUIDs }
        set { fields.serviceUUIDs = newValue }
    }
    /// Manufacturer-specific data by company identifier (Device1.ManufacturerData `a{qv}`).
    public var manufacturerData: OrderedMap<UInt16, [UInt8]> {
        get { box.fields.manufacturerData }
        set { fields.manufacturerData = newValue }
    }
    /// Service data by service UUID (Device1.ServiceData `a{sv}`).
    public var serviceData: OrderedMap<BluetoothUUID, [UInt8]> {
        get { box.fields.serviceData }
        set { fields.serviceData = newValue }
    }
    /// The advertised TX power level in dBm (Device1.TxPower).
    public var txPower: Int? {
        get { box.fields.txPower }
        set { fields.txPower = newValue }
    }
    /// Whether the device accepts connections. BlueZ does not report the PDU
    /// type; a device is taken as connectable unless its advertising flags
    /// (Device1.AdvertisingFlags) are present and mark it non-discoverable
    /// broadcaster-only, which is the best BlueZ exposes. nil when unknown.
    public var isConnectable: Bool? {
        get { box.fields.isConnectable }
        set { fields.isConnectable = newValue }
    }

    /// Advertisement data with the given contents.
    public init(
        localName: String? = nil, serviceUUIDs: [BluetoothUUID] = [],
        manufacturerData: OrderedMap<UInt16, [UInt8]> = [:], serviceData: OrderedMap<BluetoothUUID, [UInt8]> = [:],
        txPower: Int? = nil, isConnectable: Bool? = nil
    ) {
        let fields = Fields(
            localName: localName, serviceUUIDs: serviceUUIDs, manufacturerData: manufacturerData,
            serviceData: serviceData, txPower: txPower, isConnectable: isConnectable)
        box = fields == Box.empty.fields ? Box.empty : Box(fields)
    }

    /// Whether the two hold the same advertisement; values sharing one box are equal without comparing fields.
    public static func == (lhs: AdvertisementData, rhs: AdvertisementData) -> Bool {
        lhs.box === rhs.box || lhs.box.fields == rhs.box.fields
    }

    /// Hashes the advertisement's fields.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(box.fields)
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
        var fields = box.fields
        defer { self.fields = fields }
        for key in keys {
            switch key {
            case "Name", "Alias", "Address":
                let address = properties["Address"]?.stringValue
                if let name = properties["Name"]?.stringValue {
                    fields.localName = name
                } else if let alias = properties["Alias"]?.stringValue, !Self.isMadeUpAlias(alias, address: address) {
                    fields.localName = alias
                } else {
                    fields.localName = nil
                }
            case "UUIDs":
                fields.serviceUUIDs = (properties["UUIDs"]?.stringsValue ?? []).compactMap { BluetoothUUID($0) }
            case "ManufacturerData":
                let entries = properties["ManufacturerData"]?.dictionaryValue ?? [:]
                let pairs = entries.compactMap { key, value -> (UInt16, [UInt8])? in
                    guard let id = key.intValue, let company = UInt16(exactly: id), let bytes = value.bytesValue
                    else { return nil }
                    return (company, bytes)
                }
                fields.manufacturerData = OrderedMap(pairs.sorted { $0.0 < $1.0 })
            case "ServiceData":
                let entries = properties["ServiceData"]?.dictionaryValue ?? [:]
                let pairs = entries.compactMap { key, value -> (BluetoothUUID, [UInt8])? in
                    guard let text = key.stringValue, let uuid = BluetoothUUID(text), let bytes = value.bytesValue
                    else { return nil }
                    return (uuid, bytes)
                }
                fields.serviceData = OrderedMap(pairs.sorted { $0.0 < $1.0 })
            case "TxPower":
                fields.txPower = properties["TxPower"]?.intValue.map { Int($0) }
            case "AdvertisingFlags":
                fields.isConnectable = properties["AdvertisingFlags"]?.bytesValue?.first.map(Self.isConnectable(flags:))
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
