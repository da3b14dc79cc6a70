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
    /// The received signal strength in dBm, as BlueZ's Device1.RSSI gives it: ``rssiNotAvailable`` when the
    /// controller did not measure it (see ``measuredRSSI``).
    public var rssi: Int?
    /// What it advertises.
    public var advertisement: AdvertisementData
    /// How many advertisement reports this discovery stands for: 1 while the
    /// consumer keeps up, more when reports of the peripheral were merged
    /// into this one, the newest (see ``DiscoveryStream``).
    public var reportCount: Int

    /// The RSSI HCI reports for "not available" (Core specification, Vol 4, Part E, 7.7.65.2), which BlueZ passes
    /// on as Device1.RSSI and Core Bluetooth as the RSSI too; btvirt's virtual controllers report nothing else.
    public static let rssiNotAvailable = 127

    /// ``rssi`` when it is a measurement: nil when absent or ``rssiNotAvailable``. What to sort or choose by.
    public var measuredRSSI: Int? { Self.measuredRSSI(rssi) }

    /// `raw` (an RSSI as BlueZ gives it) when it is a measurement: nil when absent or ``rssiNotAvailable``.
    public static func measuredRSSI(_ raw: Int?) -> Int? { raw == rssiNotAvailable ? nil : raw }

    /// A discovery standing for `reportCount` reports.
    public init(
        identifier: PeripheralIdentifier, address: String, name: String?, rssi: Int?,
        advertisement: AdvertisementData, reportCount: Int = 1
    ) {
        self.identifier = identifier
        self.address = address
        self.name = name
        self.rssi = rssi
        self.advertisement = advertisement
        self.reportCount = reportCount
    }
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
    /// The services of the device at `devicePath` as ``RemoteService``s (GattService1.Primary, true when absent).
    func remoteServices(ofDeviceAt devicePath: String) -> [RemoteService] {
        services(ofDeviceAt: devicePath).map {
            RemoteService(uuid: $0.uuid, isPrimary: $0.properties["Primary"]?.boolValue ?? true, objectPath: $0.path)
        }
    }

    /// The paths of the services the service at `path` includes (GattService1.Includes).
    func includedServicePaths(ofServiceAt path: String) -> [String] {
        objects[path]?[BlueZInterface.gattService]?["Includes"]?.stringsValue ?? []
    }

    /// The descriptors of the characteristic at `path` as ``RemoteDescriptor``s, with their cached values.
    func remoteDescriptors(ofCharacteristicAt path: String) -> [RemoteDescriptor] {
        descriptors(ofCharacteristicAt: path).map {
            RemoteDescriptor(uuid: $0.uuid, value: $0.properties["Value"]?.bytesValue, objectPath: $0.path)
        }
    }

    /// The characteristic at `path` as a ``RemoteCharacteristic``.
    func remoteCharacteristic(at path: String) -> RemoteCharacteristic? {
        guard let properties = objects[path]?[BlueZInterface.gattCharacteristic],
            let reference = characteristicReference(at: path)
        else { return nil }
        let flags = BlueZGATTFlags.Characteristic(bluezFlags: properties["Flags"]?.stringsValue ?? [])
        return RemoteCharacteristic(
            reference: reference, properties: flags.properties,
            isNotifying: properties["Notifying"]?.boolValue ?? false, value: properties["Value"]?.bytesValue,
            mtu: properties["MTU"]?.intValue.map { ATTMTU(clamping: Int($0)) }, objectPath: path)
    }

    /// Where the characteristic at `path` is, independent of object paths:
    /// its device's identifier, its service's UUID, its UUID and which of the
    /// service's characteristics with that UUID it is.
    func characteristicReference(at path: String) -> CharacteristicReference? {
        let characteristics = index.characteristics
        guard let uuid = characteristics.uuids[path], let servicePath = characteristics.owners[path],
            let serviceUUID = index.services.uuids[servicePath], let devicePath = index.services.owners[servicePath],
            let identifier = identifier(ofDeviceAt: devicePath)
        else { return nil }
        let siblings = characteristics.members(of: servicePath).filter { characteristics.uuids[$0] == uuid }
        return CharacteristicReference(
            peripheral: identifier, service: serviceUUID, characteristic: uuid,
            instance: siblings.firstIndex(of: path) ?? 0)
    }

    /// The object path of the characteristic `reference` names, if mirrored.
    func characteristicPath(for reference: CharacteristicReference) -> String? {
        guard let device = devicePath(for: reference.peripheral) else { return nil }
        for service in index.services.members(of: device) where index.services.uuids[service] == reference.service {
            let matches = index.characteristics.members(of: service).filter {
                index.characteristics.uuids[$0] == reference.characteristic
            }
            if matches.indices.contains(reference.instance) { return matches[reference.instance] }
        }
        return nil
    }
}
