import DBus
import GATT
import SimCore

/// Reads a GATT application's GetManagedObjects reply and an advertisement's
/// LEAdvertisement1 properties as bluetoothd's gatt-database.c and advertising.c do.
enum LocalObjectsParser {
    /// bluetoothd's reply when an application holds no usable service.
    static let noValidService = BlueZError(.failed, "No valid service object found")
    /// bluetoothd's reply when an advertisement's properties do not parse.
    static let badAdvertisement = BlueZError(.failed, "Failed to parse advertisement.")

    typealias Objects = [String: [String: [String: DBusValue]]]

    /// The `a{oa{sa{sv}}}` reply as nested dictionaries.
    static func objects(_ reply: DBusValue?) -> Objects {
        var objects: Objects = [:]
        for entry in reply?.dictionaryEntries ?? [] {
            guard case .objectPath(let path) = entry.key else { continue }
            var interfaces: [String: [String: DBusValue]] = [:]
            for interface in entry.value.dictionaryEntries ?? [] {
                guard let name = interface.key.stringValue else { continue }
                interfaces[name] = properties(interface.value)
            }
            objects[path.description] = interfaces
        }
        return objects
    }

    /// An `a{sv}` as a dictionary.
    static func properties(_ value: DBusValue) -> [String: DBusValue] {
        var out: [String: DBusValue] = [:]
        for entry in value.dictionaryEntries ?? [] {
            if let key = entry.key.stringValue { out[key] = entry.value.unwrapped }
        }
        return out
    }

    private static func uuid(_ value: DBusValue?) throws(BlueZError) -> BluetoothUUID {
        guard let text = value?.stringValue, let uuid = BluetoothUUID(text) else { throw noValidService }
        return uuid
    }

    /// The application at `root` of `owner`: its services (under `root`), their characteristics
    /// (linked by `Service`) and descriptors (linked by `Characteristic`). Any object that does
    /// not parse (UUID missing or invalid, unknown flags, a link to nothing) fails the whole
    /// registration with `Failed "No valid service object found"`, as bluetoothd does.
    static func application(owner: String, root: String, objects: Objects) throws(BlueZError) -> LocalApplication {
        let inside = objects.filter { $0.key == root || $0.key.hasPrefix(root == "/" ? "/" : root + "/") }
        let paths = inside.keys.sorted()
        var services: [LocalService] = []
        for path in paths {
            guard let service = inside[path]?[BlueZInterface.gattService] else { continue }
            let primary = service["Primary"]?.boolValue ?? true
            var characteristics: [GATTCharacteristicSpec] = []
            var chrcPaths: [String] = []
            var descPaths: [[String]] = []
            var acquireNotify: Set<String> = []
            var acquireWrite: Set<String> = []
            for chrcPath in paths {
                guard let chrc = inside[chrcPath]?[BlueZInterface.gattCharacteristic],
                    chrc["Service"]?.stringValue == path
                else { continue }
                let flags = BlueZGATTFlags.Characteristic(bluezFlags: strings(chrc["Flags"]))
                do { try flags.requireKnown() } catch { throw noValidService }
                // bluetoothd asks the proxy for these properties: present means offered.
                if chrc["NotifyAcquired"] != nil { acquireNotify.insert(chrcPath) }
                if chrc["WriteAcquired"] != nil { acquireWrite.insert(chrcPath) }
                var descriptors: [GATTDescriptorSpec] = []
                var ownPaths: [String] = []
                for descPath in paths {
                    guard let desc = inside[descPath]?[BlueZInterface.gattDescriptor],
                        desc["Characteristic"]?.stringValue == chrcPath
                    else { continue }
                    let descFlags = strings(desc["Flags"])
                    descriptors.append(
                        GATTDescriptorSpec(
                            uuid: try uuid(desc["UUID"]), value: desc["Value"]?.bytesValue ?? [],
                            writable: descFlags.contains { $0.contains("write") }))
                    ownPaths.append(descPath)
                }
                characteristics.append(
                    GATTCharacteristicSpec(
                        uuid: try uuid(chrc["UUID"]), flags: flags, value: chrc["Value"]?.bytesValue ?? [],
                        descriptors: descriptors))
                chrcPaths.append(chrcPath)
                descPaths.append(ownPaths)
            }
            services.append(
                LocalService(
                    path: path,
                    spec: GATTServiceSpec(
                        uuid: try uuid(service["UUID"]), primary: primary, characteristics: characteristics),
                    characteristicPaths: chrcPaths, descriptorPaths: descPaths,
                    acquireNotifyOffered: acquireNotify, acquireWriteOffered: acquireWrite))
        }
        // A characteristic or descriptor pointing at nothing in the application.
        for (path, interfaces) in inside {
            if let chrc = interfaces[BlueZInterface.gattCharacteristic],
                !services.contains(where: { $0.characteristicPaths.contains(path) })
            {
                _ = chrc
                throw noValidService
            }
        }
        guard !services.isEmpty else { throw noValidService }
        return LocalApplication(owner: owner, path: root, services: services)
    }

    private static func strings(_ value: DBusValue?) -> [String] {
        value?.arrayValue?.compactMap(\.stringValue) ?? []
    }

    /// An LEAdvertisement1's properties as what goes on the air. `Type` must be "broadcast" or
    /// "peripheral"; `Includes` "local-name" puts `adapterName` in (unless LocalName is set),
    /// "tx-power" the TX power (0 dBm here).
    static func advertisement(
        owner: String, path: String, properties: [String: DBusValue], adapterName: String
    ) throws(BlueZError) -> LocalAdvertisement {
        guard let type = properties["Type"]?.stringValue, type == "broadcast" || type == "peripheral" else {
            throw badAdvertisement
        }
        var ad = Advertisement(flags: nil)
        let includes = strings(properties["Includes"])
        ad.serviceUUIDs = try strings(properties["ServiceUUIDs"]).map { (text) throws(BlueZError) in
            guard let uuid = BluetoothUUID(text) else { throw badAdvertisement }
            return uuid
        }
        for entry in properties["ManufacturerData"]?.dictionaryEntries ?? [] {
            guard case .uint16(let company) = entry.key.unwrapped, let data = entry.value.bytesValue else {
                throw badAdvertisement
            }
            ad.manufacturerData.append(ManufacturerDatum(company: company, data: data))
        }
        for entry in properties["ServiceData"]?.dictionaryEntries ?? [] {
            guard let text = entry.key.stringValue, let uuid = BluetoothUUID(text), let data = entry.value.bytesValue
            else { throw badAdvertisement }
            ad.serviceData.append(ServiceDatum(uuid: uuid, data: data))
        }
        ad.rawStructures = try solicitStructures(properties["SolicitUUIDs"]) + dataStructures(properties["Data"])
        if let name = properties["LocalName"]?.stringValue {
            ad.name = name
        } else if includes.contains("local-name") {
            ad.name = adapterName
        }
        if case .uint16(let appearance)? = properties["Appearance"] { ad.appearance = appearance }
        if includes.contains("tx-power") {
            if case .int16(let power)? = properties["TxPower"] {
                ad.txPower = Int8(clamping: power)
            } else {
                ad.txPower = 0
            }
        }
        let discoverable = properties["Discoverable"]?.boolValue ?? (type == "peripheral")
        ad.flags = discoverable ? 0x06 : (type == "peripheral" ? 0x04 : nil)
        var timeout: Double?
        if case .uint16(let seconds)? = properties["Timeout"], seconds > 0 { timeout = Double(seconds) }
        return LocalAdvertisement(
            owner: owner, path: path, advertisement: ad, connectable: type == "peripheral", timeout: timeout)
    }
}
