import GATT

/// An adapter in the mirrored tree.
public struct AdapterModel: Hashable, Sendable {
    /// Its object path (`/org/bluez/hci0`).
    public var path: String
    /// Adapter1.Address.
    public var address: String
    /// Adapter1.Powered.
    public var powered: Bool
    /// Adapter1.Discovering.
    public var discovering: Bool
}

/// A device in the mirrored tree.
public struct DeviceModel: Hashable, Sendable {
    /// Its object path (`/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF`).
    public var path: String
    /// Device1.Adapter.
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

extension ObjectTreeMirror {
    /// The adapters, by path.
    public var adapters: [AdapterModel] {
        objects.keys.sorted().compactMap { path in
            guard let properties = objects[path]?[BlueZInterface.adapter] else { return nil }
            return AdapterModel(
                path: path, address: properties["Address"]?.stringValue ?? "",
                powered: properties["Powered"]?.boolValue ?? false,
                discovering: properties["Discovering"]?.boolValue ?? false)
        }
    }

    /// The device at `path`, if mirrored and complete (it has an address).
    public func device(at path: String) -> DeviceModel? {
        guard let properties = objects[path]?[BlueZInterface.device],
            let address = properties["Address"]?.stringValue
        else { return nil }
        let adapter = properties["Adapter"]?.stringValue ?? parent(of: path)
        return DeviceModel(
            path: path, adapterPath: adapter, address: address,
            addressType: properties["AddressType"]?.stringValue == "random" ? .random : .public,
            rssi: properties["RSSI"]?.intValue.map { Int($0) },
            connected: properties["Connected"]?.boolValue ?? false,
            servicesResolved: properties["ServicesResolved"]?.boolValue ?? false,
            paired: properties["Paired"]?.boolValue ?? false,
            advertisement: AdvertisementData(device1: properties))
    }

    /// Every complete device, by path.
    public var devices: [DeviceModel] {
        objects.keys.sorted().compactMap { device(at: $0) }
    }

    /// The stable identifier of the device at `path` (needs its adapter's address).
    public func identifier(ofDeviceAt path: String) -> PeripheralIdentifier? {
        guard let device = device(at: path),
            let adapterAddress = objects[device.adapterPath]?[BlueZInterface.adapter]?["Address"]?.stringValue
        else { return nil }
        return PeripheralIdentifier(adapter: adapterAddress, address: device.address, addressType: device.addressType)
    }

    /// The path of the device whose identifier is `identifier`, if mirrored.
    public func devicePath(for identifier: PeripheralIdentifier) -> String? {
        devices.first { self.identifier(ofDeviceAt: $0.path) == identifier }?.path
    }

    /// The services of the device at `devicePath`, in path (handle) order.
    public func services(ofDeviceAt devicePath: String) -> [RemoteAttributeModel] {
        attributes(interface: BlueZInterface.gattService, parentKey: "Device", parent: devicePath)
    }

    /// The characteristics of the service at `servicePath`.
    public func characteristics(ofServiceAt servicePath: String) -> [RemoteAttributeModel] {
        attributes(interface: BlueZInterface.gattCharacteristic, parentKey: "Service", parent: servicePath)
    }

    /// The descriptors of the characteristic at `characteristicPath`.
    public func descriptors(ofCharacteristicAt characteristicPath: String) -> [RemoteAttributeModel] {
        attributes(interface: BlueZInterface.gattDescriptor, parentKey: "Characteristic", parent: characteristicPath)
    }

    private func attributes(interface: String, parentKey: String, parent: String) -> [RemoteAttributeModel] {
        objects.keys.sorted().compactMap { path in
            guard let properties = objects[path]?[interface],
                let uuid = properties["UUID"]?.stringValue.flatMap({ BluetoothUUID($0) })
            else { return nil }
            let owner = properties[parentKey]?.stringValue ?? self.parent(of: path)
            guard owner == parent else { return nil }
            return RemoteAttributeModel(path: path, parentPath: owner, uuid: uuid, properties: properties)
        }
    }

    private func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }
}
