import BLE
import DBus
import GATT

/// Where each attribute of a local GATT application lives in the exported
/// object tree, and the D-Bus properties BlueZ reads from it
/// (doc/gatt-api.txt: GattService1, GattCharacteristic1, GattDescriptor1).
///
/// Pure: built from the services alone. Paths are
/// `<root>/service<i>/char<j>/desc<k>` in model order. The Client
/// Characteristic Configuration (0x2902) and Characteristic Extended
/// Properties (0x2900) descriptors of the model are left out: bluetoothd adds
/// its own from the characteristic's flags (src/gatt-database.c
/// `database_add_ccc`, `database_add_cep`).
public struct GATTApplicationLayout: Sendable {
    /// One exported service.
    public struct Service: Sendable {
        /// Its object path.
        public var path: ObjectPath
        /// The model.
        public var service: GATTService
        /// Paths of the services it includes (matched by UUID in this application).
        public var includes: [ObjectPath]
    }

    /// One exported characteristic.
    public struct Characteristic: Sendable {
        /// Its object path.
        public var path: ObjectPath
        /// Its service's path.
        public var servicePath: ObjectPath
        /// How the BLE API names it.
        public var id: LocalCharacteristic
        /// The model.
        public var characteristic: GATTCharacteristic
        /// The `Flags` property.
        public var flags: [String]
    }

    /// One exported descriptor.
    public struct Descriptor: Sendable {
        /// Its object path.
        public var path: ObjectPath
        /// Its characteristic's path.
        public var characteristicPath: ObjectPath
        /// The model.
        public var descriptor: GATTDescriptor
        /// The `Flags` property.
        public var flags: [String]
    }

    /// The application root (the ObjectManager bluetoothd reads).
    public let root: ObjectPath
    /// The services, in model order.
    public let services: [Service]
    /// Every characteristic, in model order.
    public let characteristics: [Characteristic]
    /// Every exported descriptor, in model order.
    public let descriptors: [Descriptor]

    /// The layout of `services` under `root`.
    public init(root: ObjectPath, services models: [GATTService]) throws(DBusMarshalError) {
        self.root = root
        var services: [Service] = []
        var characteristics: [Characteristic] = []
        var descriptors: [Descriptor] = []
        var seen: [LocalCharacteristic: Int] = [:]
        var servicePaths: [BluetoothUUID: ObjectPath] = [:]
        for (i, model) in models.enumerated() {
            let path = try root.appending("service\(i)")
            if servicePaths[model.uuid] == nil { servicePaths[model.uuid] = path }
            services.append(Service(path: path, service: model, includes: []))
            for (j, characteristic) in model.characteristics.enumerated() {
                let charPath = try path.appending("char\(j)")
                let key = LocalCharacteristic(service: model.uuid, uuid: characteristic.uuid)
                let instance = seen[key, default: 0]
                seen[key] = instance + 1
                let id = LocalCharacteristic(service: model.uuid, uuid: characteristic.uuid, instance: instance)
                let flags = BlueZGATTFlags.Characteristic(
                    properties: characteristic.properties, extendedProperties: characteristic.extendedProperties,
                    permissions: characteristic.permissions,
                    subscriptionPermissions: characteristic.subscriptionPermissions
                ).bluezFlags
                characteristics.append(
                    Characteristic(
                        path: charPath, servicePath: path, id: id, characteristic: characteristic, flags: flags))
                var k = 0
                for descriptor in characteristic.descriptors where !Self.addedByBlueZ(descriptor.uuid) {
                    let descPath = try charPath.appending("desc\(k)")
                    k += 1
                    let descFlags = BlueZGATTFlags.Descriptor(permissions: descriptor.permissions).bluezFlags
                    descriptors.append(
                        Descriptor(
                            path: descPath, characteristicPath: charPath, descriptor: descriptor, flags: descFlags))
                }
            }
        }
        for index in services.indices {
            services[index].includes = services[index].service.includedServices.compactMap { servicePaths[$0.uuid] }
        }
        self.services = services
        self.characteristics = characteristics
        self.descriptors = descriptors
    }

    /// Whether bluetoothd makes this descriptor itself (CCC, CEP).
    public static func addedByBlueZ(_ uuid: BluetoothUUID) -> Bool {
        uuid == BluetoothUUID(uuid16: 0x2902) || uuid == BluetoothUUID(uuid16: 0x2900)
    }

    /// The characteristic exported at `path`.
    public func characteristic(at path: ObjectPath) -> Characteristic? {
        characteristics.first { $0.path == path }
    }

    /// The exported characteristic named `id`.
    public func characteristic(_ id: LocalCharacteristic) -> Characteristic? {
        characteristics.first { $0.id == id }
    }

    /// Every path, parents before children (the order to export them in).
    public var paths: [ObjectPath] {
        services.map(\.path) + characteristics.map(\.path) + descriptors.map(\.path)
    }

    /// GattService1's properties.
    public static func properties(of service: Service) -> [(String, DBusValue)] {
        [
            ("UUID", .string(service.service.uuid.uuidString)),
            ("Primary", .boolean(service.service.isPrimary)),
            ("Includes", .array(.objectPath, service.includes.map(DBusValue.objectPath))),
        ]
    }

    /// GattCharacteristic1's properties (Value only when the model has one).
    public static func properties(of characteristic: Characteristic) -> [(String, DBusValue)] {
        var properties: [(String, DBusValue)] = [
            ("UUID", .string(characteristic.characteristic.uuid.uuidString)),
            ("Service", .objectPath(characteristic.servicePath)),
            ("Flags", .array(.string, characteristic.flags.map(DBusValue.string))),
        ]
        if let value = characteristic.characteristic.value { properties.append(("Value", .bytes(value))) }
        return properties
    }

    /// GattDescriptor1's properties.
    public static func properties(of descriptor: Descriptor) -> [(String, DBusValue)] {
        var properties: [(String, DBusValue)] = [
            ("UUID", .string(descriptor.descriptor.uuid.uuidString)),
            ("Characteristic", .objectPath(descriptor.characteristicPath)),
            ("Flags", .array(.string, descriptor.flags.map(DBusValue.string))),
        ]
        if let value = descriptor.descriptor.value { properties.append(("Value", .bytes(value))) }
        return properties
    }
}
