import GATT

/// A remote service found on a peripheral.
public struct RemoteService: Hashable, Sendable {
    /// Its UUID.
    public var uuid: BluetoothUUID
    /// Whether it is a primary service.
    public var isPrimary: Bool
    /// Its BlueZ object path (valid for the current connection).
    public var objectPath: String
}

/// A remote characteristic.
public struct RemoteCharacteristic: Hashable, Sendable {
    /// Where it is, independent of BlueZ object paths.
    public var reference: CharacteristicReference
    /// Its UUID.
    public var uuid: BluetoothUUID { reference.characteristic }
    /// Its properties (from GattCharacteristic1.Flags).
    public var properties: CharacteristicProperties
    /// GattCharacteristic1.Notifying.
    public var isNotifying: Bool
    /// The last value read or notified (GattCharacteristic1.Value).
    public var value: [UInt8]?
    /// The ATT MTU of the link (GattCharacteristic1.MTU), when BlueZ reports it.
    public var mtu: ATTMTU?
    /// Its BlueZ object path (valid for the current connection).
    public var objectPath: String
}

/// A remote descriptor.
public struct RemoteDescriptor: Hashable, Sendable {
    /// Its UUID.
    public var uuid: BluetoothUUID
    /// The cached value (GattDescriptor1.Value).
    public var value: [UInt8]?
    /// Its BlueZ object path.
    public var objectPath: String
}

/// How far BlueZ's service discovery on a peripheral is (BlueZ always discovers the whole
/// database after connecting, then sets Device1.ServicesResolved).
public enum ServiceDiscoveryState: String, Hashable, Sendable {
    /// Not connected: nothing is being discovered.
    case idle
    /// Connected, services not resolved yet.
    case discovering
    /// Device1.ServicesResolved: the GATT objects are there.
    case discovered
}

/// Where a peripheral's link stands (`CBPeripheralState`).
public enum PeripheralState: String, Hashable, Sendable {
    /// Not connected.
    case disconnected
    /// Device1.Connect in progress.
    case connecting
    /// Connected.
    case connected
    /// Device1.Disconnect in progress.
    case disconnecting
}

/// A peripheral found while scanning.
public struct Discovery: Hashable, Sendable {
    /// The peripheral's identifier.
    public var identifier: PeripheralIdentifier
    /// Its Bluetooth address (Device1.Address, `AA:BB:CC:DD:EE:FF`): what
    /// advertisement formats that authenticate their sender (encrypted
    /// BTHome's nonce) and operators' allow lists name it by.
    public var address: String
    /// Its name, if known.
    public var name: String?
    /// The received signal strength in dBm.
    public var rssi: Int?
    /// What it advertises.
    public var advertisement: AdvertisementData
}

/// A change in a peripheral's connection, delivered by
/// ``CentralManager/connectionEvents()``.
public enum ConnectionEvent: Hashable, Sendable {
    /// The peripheral connected.
    case connected(PeripheralIdentifier)
    /// Connecting failed.
    case failedToConnect(PeripheralIdentifier, BLEError)
    /// The link dropped; the error is nil when we asked for it (cancelConnection).
    case disconnected(PeripheralIdentifier, BLEError?)
}

extension ObjectTreeMirror {
    /// The characteristic at `path` as a ``RemoteCharacteristic``.
    func remoteCharacteristic(at path: String) -> RemoteCharacteristic? {
        guard let properties = objects[path]?[BlueZInterface.gattCharacteristic],
            let uuid = properties["UUID"]?.stringValue.flatMap({ BluetoothUUID($0) }),
            let servicePath = properties["Service"]?.stringValue,
            let service = objects[servicePath]?[BlueZInterface.gattService],
            let serviceUUID = service["UUID"]?.stringValue.flatMap({ BluetoothUUID($0) }),
            let devicePath = service["Device"]?.stringValue, let identifier = identifier(ofDeviceAt: devicePath)
        else { return nil }
        let siblings = characteristics(ofServiceAt: servicePath).filter { $0.uuid == uuid }
        let instance = siblings.firstIndex { $0.path == path } ?? 0
        let flags = BlueZGATTFlags.Characteristic(bluezFlags: properties["Flags"]?.stringsValue ?? [])
        return RemoteCharacteristic(
            reference: CharacteristicReference(
                peripheral: identifier, service: serviceUUID, characteristic: uuid, instance: instance),
            properties: flags.properties, isNotifying: properties["Notifying"]?.boolValue ?? false,
            value: properties["Value"]?.bytesValue,
            mtu: properties["MTU"]?.intValue.map { ATTMTU(clamping: Int($0)) }, objectPath: path)
    }

    /// The object path of the characteristic `reference` names, if mirrored.
    func characteristicPath(for reference: CharacteristicReference) -> String? {
        guard let device = devicePath(for: reference.peripheral) else { return nil }
        for service in services(ofDeviceAt: device) where service.uuid == reference.service {
            let matches = characteristics(ofServiceAt: service.path).filter { $0.uuid == reference.characteristic }
            if matches.indices.contains(reference.instance) { return matches[reference.instance].path }
        }
        return nil
    }

    /// The device path owning the attribute at `path` (a prefix of it).
    func owningDevicePath(of path: String) -> String? {
        objects.keys.filter { objects[$0]?[BlueZInterface.device] != nil && (path == $0 || path.hasPrefix($0 + "/")) }
            .max { $0.count < $1.count }
    }
}
