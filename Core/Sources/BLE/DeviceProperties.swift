import GATT

/// One device's mirrored Device1 properties (``ObjectTreeMirror/mirroredDeviceProperties``), held typed: the
/// mirror's only copy of a device, from which its ``DeviceModel`` is read.
///
/// Each property is kept in the form the BLE layer reads it (the address, an RSSI, the service UUIDs, manufacturer
/// and service data by key, ...) whenever BlueZ sent it with its usual D-Bus type and form, from which the D-Bus
/// value can be rebuilt exactly. A value of any other type or form (a UUID not in BlueZ's canonical text, a company
/// id that is not a `q`, an RSSI that is not an `n`) is kept as sent, in ``unusual``. So ``value(of:)`` gives back
/// exactly what BlueZ sent, a change is detected per property exactly as on the D-Bus values, and nothing is kept
/// twice. An alias that is the one BlueZ makes up for an unnamed device (its address with `-` for `:`) is kept as a
/// mark, not as text.
///
/// The values kept for one device take at most ``byteBudget`` bytes together: a value that would take them past it
/// (a hostile or broken BlueZ can send a name or manufacturer data up to the bus's message size) is refused, and the
/// property keeps the value it had.
struct DeviceProperties: Sendable {
    /// Device1.Alias.
    enum Alias: Hashable, Sendable {
        /// The address with `-` for `:`, exactly.
        case madeUp
        /// Any other alias.
        case text(String)
    }

    private(set) var address: String?
    private(set) var addressType: AddressType?
    private(set) var name: String?
    private(set) var alias: Alias?
    private(set) var adapter: String?
    private(set) var paired: Bool?
    private(set) var connected: Bool?
    private(set) var servicesResolved: Bool?
    private(set) var rssi: Int16?
    private(set) var txPower: Int16?
    private(set) var uuids: [BluetoothUUID]?
    private(set) var manufacturerData: OrderedMap<UInt16, [UInt8]>?
    private(set) var serviceData: OrderedMap<BluetoothUUID, [UInt8]>?
    private(set) var advertisingFlags: [UInt8]?
    /// Mirrored properties sent with another type or form than BlueZ's usual one, as sent.
    private(set) var unusual: PropertyMap = [:]
    /// What the device advertises: the value ``AdvertisementData/init(device1:)`` reads from the D-Bus values.
    /// Made again only when a property it reads changes, so every report of an unchanged advertisement shares it.
    private(set) var advertisement = AdvertisementData()

    /// The Device1 properties kept (those the BLE layer reads), in the order they are listed.
    static let names = [
        "Address", "AddressType", "Name", "Alias", "Paired", "Connected", "ServicesResolved", "RSSI", "TxPower",
        "UUIDs", "ManufacturerData", "ServiceData", "AdvertisingFlags", "Adapter",
    ]

    /// The most bytes (``PropertyValue/payloadBytes``, as sent) the values kept for one device take together:
    /// 8 KiB, several times what BLE lets a device carry (1,650 bytes of extended advertising data, as much in a
    /// scan response, a name of at most 248 bytes), so the mirror's memory is bounded by its number of devices.
    static let byteBudget = 8_192

    /// The mirrored properties among `properties` (the others are ignored); values past ``byteBudget`` are left
    /// out and counted in `refused`.
    init(_ properties: PropertyMap, refused: inout Int) {
        _ = apply(properties, [], refused: &refused)
    }

    /// Sets the mirrored properties among `changed` and removes `invalidated`; returns the keys whose value differs
    /// afterwards, in the order met. Others are ignored. A value that would take the device past ``byteBudget`` is
    /// not set (the property keeps its value) and is counted in `refused`.
    mutating func apply(_ changed: PropertyMap, _ invalidated: [String], refused: inout Int) -> [String] {
        var keys: [String] = []
        // The address first: an alias made up from it is read against the new one.
        if let address = changed["Address"], set("Address", to: address, refused: &refused) { keys.append("Address") }
        for (key, value) in changed where key != "Address" && set(key, to: value, refused: &refused) {
            keys.append(key)
        }
        for key in invalidated where set(key, to: nil, refused: &refused) { keys.append(key) }
        if keys.contains(where: Self.affectsAdvertisement) { advertisement = makeAdvertisement() }
        return keys
    }

    /// Sets `key` to `value` (nil: the property is gone); returns whether its value changed.
    private mutating func set(_ key: String, to value: PropertyValue?, refused: inout Int) -> Bool {
        guard let value else { return set(key, to: nil) }
        // bluetoothd sends these again with every report of a scan with duplicates: compared before decoded.
        switch key {
        case "ManufacturerData": if let manufacturerData, Self.value(value, holds: manufacturerData) { return false }
        case "ServiceData": if let serviceData, Self.value(value, holds: serviceData) { return false }
        case "UUIDs": if let uuids, Self.value(value, holds: uuids) { return false }
        default: break
        }
        guard
            value.isScalar || !Self.names.contains(key)
                || value.payloadBytes + keptBytes(besides: key) <= Self.byteBudget
        else {
            refused += 1
            return false
        }
        return set(key, to: value)
    }

    /// Sets `key` to `value` (nil: the property is gone); returns whether its value changed.
    private mutating func set(_ key: String, to value: PropertyValue?) -> Bool {
        switch key {
        case "RSSI": return Self.store(&rssi, value.flatMap(Self.int16), &unusual, key, value)
        case "ManufacturerData":
            return Self.store(&manufacturerData, value.flatMap(Self.manufacturerData), &unusual, key, value)
        case "ServiceData":
            return Self.store(&serviceData, value.flatMap(Self.serviceData), &unusual, key, value)
        case "TxPower": return Self.store(&txPower, value.flatMap(Self.int16), &unusual, key, value)
        case "Name": return Self.store(&name, value.flatMap(Self.string), &unusual, key, value)
        case "Alias":
            let typed = value.flatMap { alias(for: $0) }
            return Self.store(&alias, typed, &unusual, key, value)
        case "UUIDs": return Self.store(&uuids, value.flatMap(Self.uuids), &unusual, key, value)
        case "Connected": return Self.store(&connected, value.flatMap(Self.bool), &unusual, key, value)
        case "ServicesResolved": return Self.store(&servicesResolved, value.flatMap(Self.bool), &unusual, key, value)
        case "Paired": return Self.store(&paired, value.flatMap(Self.bool), &unusual, key, value)
        case "Address":
            let typed = value.flatMap(Self.string)
            guard typed != address || unusual[key] != (typed == nil ? value : nil) else { return false }
            // A made-up alias named the old address: it stays what it was, as text.
            if alias == .madeUp, let made = madeUpAlias { alias = .text(made) }
            return Self.store(&address, typed, &unusual, key, value)
        case "AddressType": return Self.store(&addressType, value.flatMap(Self.addressType), &unusual, key, value)
        case "AdvertisingFlags": return Self.store(&advertisingFlags, value.flatMap(Self.bytes), &unusual, key, value)
        case "Adapter": return Self.store(&adapter, value.flatMap(Self.objectPath), &unusual, key, value)
        default: return false
        }
    }

    /// Puts `typed` in `field` when the value had the usual form, else the value itself in `unusual`; returns
    /// whether either differs from before.
    private static func store<T: Equatable>(
        _ field: inout T?, _ typed: T?, _ unusual: inout PropertyMap, _ key: String, _ value: PropertyValue?
    ) -> Bool {
        let raw = typed == nil ? value : nil
        let rawChanged = unusual.isEmpty ? raw != nil : unusual[key] != raw
        guard field != typed || rawChanged else { return false }
        field = typed
        if rawChanged { unusual[key] = raw }
        return true
    }

    /// The bytes (as sent) of the values kept for the properties other than `key` whose size is not fixed.
    private func keptBytes(besides key: String) -> Int {
        func text(_ name: String, _ value: String?) -> Int { name == key ? 0 : value.map { $0.utf8.count + 1 } ?? 0 }
        var bytes = text("Address", address) + text("AddressType", addressType?.rawValue) + text("Name", name)
        bytes += text("Adapter", adapter)
        if key != "Alias", case .text(let alias) = alias { bytes += alias.utf8.count + 1 }
        if key != "UUIDs", let uuids { bytes += uuids.count * Self.uuidTextBytes }
        if key != "ManufacturerData", let manufacturerData {
            bytes += manufacturerData.reduce(0) { $0 + 8 + $1.value.count }
        }
        if key != "ServiceData", let serviceData {
            bytes += serviceData.reduce(0) { $0 + Self.uuidTextBytes + $1.value.count }
        }
        if key != "AdvertisingFlags", let advertisingFlags { bytes += advertisingFlags.count }
        for (name, value) in unusual where name != key { bytes += value.payloadBytes }
        return bytes
    }

    /// A UUID in BlueZ's text form with its terminator.
    private static let uuidTextBytes = 37

    /// The names of the properties present.
    var keys: [String] {
        Self.names.filter { value(of: $0) != nil }
    }

    /// Every property present, as BlueZ sent it.
    var propertyMap: PropertyMap {
        var map: PropertyMap = [:]
        for key in Self.names {
            if let value = value(of: key) { map[key] = value }
        }
        return map
    }

    /// The D-Bus value of `key` as BlueZ sent it; nil when absent or not mirrored.
    func value(of key: String) -> PropertyValue? {
        if let raw = unusual[key] { return raw }
        switch key {
        case "Address": return address.map(PropertyValue.string)
        case "AddressType": return addressType.map { .string($0.rawValue) }
        case "Name": return name.map(PropertyValue.string)
        case "Alias":
            switch alias {
            case .madeUp: return madeUpAlias.map(PropertyValue.string)
            case .text(let text): return .string(text)
            case nil: return nil
            }
        case "Adapter": return adapter.map(PropertyValue.objectPath)
        case "Paired": return paired.map(PropertyValue.bool)
        case "Connected": return connected.map(PropertyValue.bool)
        case "ServicesResolved": return servicesResolved.map(PropertyValue.bool)
        case "RSSI": return rssi.map { .int(Int64($0)) }
        case "TxPower": return txPower.map { .int(Int64($0)) }
        case "UUIDs": return uuids.map { .array($0.map { .string($0.uuidString) }) }
        case "ManufacturerData":
            return manufacturerData.map { data in
                .dictionary(Dictionary(uniqueKeysWithValues: data.map { (.uint(UInt64($0.key)), .bytes($0.value)) }))
            }
        case "ServiceData":
            return serviceData.map { data in
                .dictionary(
                    Dictionary(uniqueKeysWithValues: data.map { (.string($0.key.uuidString), .bytes($0.value)) }))
            }
        case "AdvertisingFlags": return advertisingFlags.map(PropertyValue.bytes)
        default: return nil
        }
    }

    /// Device1.Adapter as the BLE layer reads it (an object path or a string).
    var adapterPath: String? { adapter ?? unusual["Adapter"]?.stringValue }

    /// Device1.Connected is true.
    var isConnected: Bool { connected ?? false }

    /// Device1.Paired is true.
    var isPaired: Bool { paired == true }

    /// The typed view of the device at `path` of the adapter at `adapterPath`; nil without an Address. The same
    /// value ``DeviceModel/init(path:adapterPath:device1:)`` reads from the D-Bus values.
    func model(path: String, adapterPath: String) -> DeviceModel? {
        guard unusual.isEmpty else { return DeviceModel(path: path, adapterPath: adapterPath, device1: propertyMap) }
        guard let address else { return nil }
        return DeviceModel(
            path: path, adapterPath: adapterPath, address: address, addressType: addressType ?? .public,
            rssi: rssi.map { Int($0) }, connected: connected ?? false, servicesResolved: servicesResolved ?? false,
            paired: paired ?? false, advertisement: advertisement)
    }

    /// The advertisement as the properties read now.
    private func makeAdvertisement() -> AdvertisementData {
        guard unusual.isEmpty else { return AdvertisementData(device1: propertyMap) }
        var localName = name
        if localName == nil, case .text(let text) = alias, !AdvertisementData.isMadeUpAlias(text, address: address) {
            localName = text
        }
        return AdvertisementData(
            localName: localName, serviceUUIDs: uuids ?? [], manufacturerData: manufacturerData ?? [:],
            serviceData: serviceData ?? [:], txPower: txPower.map { Int($0) },
            isConnectable: advertisingFlags?.first.map(AdvertisementData.isConnectable(flags:)))
    }

    /// Whether a change of the property `key` can change ``advertisement``.
    static func affectsAdvertisement(_ key: String) -> Bool {
        switch key {
        case "ManufacturerData", "ServiceData", "Name", "Alias", "UUIDs", "TxPower", "AdvertisingFlags", "Address":
            true
        default:
            false
        }
    }

    /// The alias BlueZ makes up from the address, if there is one.
    private var madeUpAlias: String? {
        address.map { String($0.map { $0 == ":" ? "-" : $0 }) }
    }

    private func alias(for value: PropertyValue) -> Alias? {
        guard case .string(let text) = value else { return nil }
        guard let address, text.utf8.count == address.utf8.count,
            zip(text.utf8, address.utf8).allSatisfy({ $0 == ($1 == UInt8(ascii: ":") ? UInt8(ascii: "-") : $1) })
        else { return .text(text) }
        return .madeUp
    }

    private static func string(_ value: PropertyValue) -> String? {
        if case .string(let text) = value { text } else { nil }
    }

    private static func objectPath(_ value: PropertyValue) -> String? {
        if case .objectPath(let path) = value { path } else { nil }
    }

    private static func bool(_ value: PropertyValue) -> Bool? {
        if case .bool(let flag) = value { flag } else { nil }
    }

    private static func int16(_ value: PropertyValue) -> Int16? {
        if case .int(let number) = value { Int16(exactly: number) } else { nil }
    }

    private static func bytes(_ value: PropertyValue) -> [UInt8]? {
        if case .bytes(let bytes) = value { bytes } else { nil }
    }

    private static func addressType(_ value: PropertyValue) -> AddressType? {
        guard case .string(let text) = value else { return nil }
        return AddressType(rawValue: text)
    }

    private static func uuids(_ value: PropertyValue) -> [BluetoothUUID]? {
        guard case .array(let elements) = value else { return nil }
        var uuids: [BluetoothUUID] = []
        uuids.reserveCapacity(elements.count)
        for element in elements {
            guard case .string(let text) = element, let uuid = BluetoothUUID.canonical(text) else { return nil }
            uuids.append(uuid)
        }
        return uuids
    }

    /// Whether `value` is manufacturer data in the usual form whose entries are those of `data`.
    private static func value(_ value: PropertyValue, holds data: OrderedMap<UInt16, [UInt8]>) -> Bool {
        guard case .dictionary(let entries) = value, entries.count == data.count else { return false }
        return entries.allSatisfy { key, value in
            guard case .uint(let id) = key, let company = UInt16(exactly: id), case .bytes(let bytes) = value else {
                return false
            }
            return data[company] == bytes
        }
    }

    /// Whether `value` is service data in the usual form whose entries are those of `data`.
    private static func value(_ value: PropertyValue, holds data: OrderedMap<BluetoothUUID, [UInt8]>) -> Bool {
        guard case .dictionary(let entries) = value, entries.count == data.count else { return false }
        return entries.allSatisfy { key, value in
            guard case .string(let text) = key, let uuid = BluetoothUUID.canonical(text), case .bytes(let bytes) = value
            else { return false }
            return data[uuid] == bytes
        }
    }

    /// Whether `value` is a UUID list in the usual form naming `uuids`, in order.
    private static func value(_ value: PropertyValue, holds uuids: [BluetoothUUID]) -> Bool {
        guard case .array(let elements) = value, elements.count == uuids.count else { return false }
        return zip(elements, uuids).allSatisfy { element, uuid in
            guard case .string(let text) = element else { return false }
            return BluetoothUUID.canonical(text) == uuid
        }
    }

    /// `a{qv}` with byte-array values, by company id.
    private static func manufacturerData(_ value: PropertyValue) -> OrderedMap<UInt16, [UInt8]>? {
        guard case .dictionary(let entries) = value else { return nil }
        var pairs: [(UInt16, [UInt8])] = []
        pairs.reserveCapacity(entries.count)
        for (key, value) in entries {
            guard case .uint(let id) = key, let company = UInt16(exactly: id), case .bytes(let bytes) = value else {
                return nil
            }
            pairs.append((company, bytes))
        }
        pairs.sort { $0.0 < $1.0 }
        return OrderedMap(pairs)
    }

    /// `a{sv}` with canonical UUID keys and byte-array values, by UUID.
    private static func serviceData(_ value: PropertyValue) -> OrderedMap<BluetoothUUID, [UInt8]>? {
        guard case .dictionary(let entries) = value else { return nil }
        var pairs: [(BluetoothUUID, [UInt8])] = []
        pairs.reserveCapacity(entries.count)
        for (key, value) in entries {
            guard case .string(let text) = key, let uuid = BluetoothUUID.canonical(text), case .bytes(let bytes) = value
            else { return nil }
            pairs.append((uuid, bytes))
        }
        pairs.sort { $0.0 < $1.0 }
        return OrderedMap(pairs)
    }
}
