import GATT

/// A device in the mirrored tree.
public struct DeviceModel: Hashable, Sendable {
    /// Its object path (`/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF`).
    public var path: String
    /// Its adapter's ``AdapterStatus/id`` (Device1.Adapter, else the parent path).
    public var adapterPath: String
    /// Device1.Address.
    public var address: String
    /// Device1.AddressType (`public` unless BlueZ says `random`).
    public var addressType: AddressType
    /// Device1.RSSI, when recently advertising.
    public var rssi: Int?
    /// Device1.Connected.
    public var connected: Bool
    /// Device1.ServicesResolved.
    public var servicesResolved: Bool
    /// Device1.Paired.
    public var paired: Bool
    /// What it advertises (from its Device1 properties).
    public var advertisement: AdvertisementData
}

/// A remote GATT service, characteristic or descriptor in the mirrored tree.
public struct RemoteAttributeModel: Hashable, Sendable {
    /// Its object path.
    public var path: String
    /// The path of the object it belongs to (device, service or characteristic).
    public var parentPath: String
    /// Its UUID.
    public var uuid: BluetoothUUID
    /// Its properties on the bus.
    public var properties: PropertyMap
}

extension DeviceModel {
    /// The typed view of a Device1 property map; nil without an Address.
    init?(path: String, adapterPath: String, device1 properties: PropertyMap) {
        guard let address = properties["Address"]?.stringValue else { return nil }
        self.init(
            path: path, adapterPath: adapterPath, address: address,
            addressType: properties["AddressType"]?.stringValue == "random" ? .random : .public,
            rssi: properties["RSSI"]?.intValue.map { Int($0) },
            connected: properties["Connected"]?.boolValue ?? false,
            servicesResolved: properties["ServicesResolved"]?.boolValue ?? false,
            paired: properties["Paired"]?.boolValue ?? false,
            advertisement: AdvertisementData(device1: properties))
    }
}

extension ObjectTreeMirror {
    /// The properties of `interface` at `path` as BlueZ sent them (of Device1, those the mirror keeps:
    /// ``mirroredDeviceProperties``), if the mirror holds it.
    public func properties(at path: String, interface: String) -> PropertyMap? {
        guard interface == BlueZInterface.device else { return objects[path]?[interface] }
        return index.devices[path]?.properties.propertyMap
    }

    /// The interfaces at `path` with their properties (as ``properties(at:interface:)`` gives them), if the
    /// mirror holds an object there.
    public func interfaces(at path: String) -> InterfaceMap? {
        guard var interfaces = objects[path] else { return nil }
        if interfaces[BlueZInterface.device] != nil {
            interfaces[BlueZInterface.device] = index.devices[path]?.properties.propertyMap
        }
        return interfaces
    }

    /// The device at `path`, if mirrored and complete (it has an address).
    public func device(at path: String) -> DeviceModel? {
        index.devices[path]?.model(at: path)
    }

    /// Every complete device, by path.
    public var devices: [DeviceModel] {
        index.devices.keys.sorted().compactMap { index.devices[$0]?.model(at: $0) }
    }

    /// The complete devices of the adapter at `adapterPath`, by path.
    public func devices(ofAdapter adapterPath: String) -> [DeviceModel] {
        (index.devicesByAdapter[adapterPath] ?? []).sorted().compactMap { index.devices[$0]?.model(at: $0) }
    }

    /// The connected devices (Device1.Connected), by path.
    public var connectedDevices: [DeviceModel] {
        index.connectedDevices.sorted().compactMap { index.devices[$0]?.model(at: $0) }
    }

    /// How many devices (complete or not) the mirror holds.
    public var deviceCount: Int { index.devices.count }

    /// The typed view and the identifier of the device at `path`, with the
    /// count of changes of its advertisement (``DeviceEntry/advertisementVersion``), in one lookup.
    ///
    /// Mutating only to read the entry where it is stored: the getter of `Dictionary.Values` returns a copy of
    /// the whole entry (a retain and a release of each of its fields), its modify accessor does not.
    mutating func deviceReport(at path: String) -> DeviceReport? {
        guard let position = index.devices.index(forKey: path) else { return nil }
        return Self.report(of: &index.devices.values[position], at: path)
    }

    /// What ``deviceReport(at:)`` returns.
    typealias DeviceReport = (DeviceModel, PeripheralIdentifier, advertisementVersion: UInt64)

    private static func report(of entry: inout DeviceEntry, at path: String) -> DeviceReport? {
        guard let identifier = entry.identifier, let model = entry.model(at: path) else { return nil }
        return (model, identifier, entry.advertisementVersion)
    }

    /// The stable identifier of the device at `path` (needs its adapter's address).
    public func identifier(ofDeviceAt path: String) -> PeripheralIdentifier? {
        index.devices[path]?.identifier
    }

    /// The path of the device whose identifier is `identifier`, if mirrored.
    public func devicePath(for identifier: PeripheralIdentifier) -> String? {
        index.paths[identifier]
    }

    /// The services of the device at `devicePath`, in path (handle) order.
    public func services(ofDeviceAt devicePath: String) -> [RemoteAttributeModel] {
        attributes(index.services, BlueZInterface.gattService, of: devicePath)
    }

    /// The characteristics of the service at `servicePath`.
    public func characteristics(ofServiceAt servicePath: String) -> [RemoteAttributeModel] {
        attributes(index.characteristics, BlueZInterface.gattCharacteristic, of: servicePath)
    }

    /// The descriptors of the characteristic at `characteristicPath`.
    public func descriptors(ofCharacteristicAt characteristicPath: String) -> [RemoteAttributeModel] {
        attributes(index.descriptors, BlueZInterface.gattDescriptor, of: characteristicPath)
    }

    private func attributes(
        _ attributes: AttributeIndex, _ interface: String, of owner: String
    )
        -> [RemoteAttributeModel]
    {
        attributes.members(of: owner).compactMap { path in
            guard let properties = objects[path]?[interface], let uuid = attributes.uuids[path] else { return nil }
            return RemoteAttributeModel(path: path, parentPath: owner, uuid: uuid, properties: properties)
        }
    }
}
