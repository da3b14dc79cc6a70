import GATT

/// The D-Bus names of the remote GATT interfaces, as bluetoothd names them.
extension BlueZInterface {
    /// `org.bluez.GattService1`
    public static let gattService = "org.bluez.GattService1"
    /// `org.bluez.GattCharacteristic1`
    public static let gattCharacteristic = "org.bluez.GattCharacteristic1"
    /// `org.bluez.GattDescriptor1`
    public static let gattDescriptor = "org.bluez.GattDescriptor1"
}

/// Object paths and properties of a connected device's GATT objects, as bluetoothd's
/// gatt-client.c builds them: `serviceXXXX` (service handle), `charXXXX` (declaration handle),
/// `descXXXX` (descriptor handle), four lowercase hex digits.
public enum GATTObjects {
    /// `XXXX` for a handle.
    static func hex(_ handle: UInt16) -> String {
        let digits = String(handle, radix: 16)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// The path of `service` under `devicePath`.
    public static func path(device devicePath: String, service: GATTServer.Service) -> String {
        devicePath + "/service" + hex(service.handle)
    }

    /// The path of `characteristic` of the service at `servicePath`.
    public static func path(service servicePath: String, characteristic: GATTServer.Characteristic) -> String {
        servicePath + "/char" + hex(characteristic.handle)
    }

    /// The path of `descriptor` of the characteristic at `characteristicPath`.
    public static func path(characteristic characteristicPath: String, descriptor: GATTServer.Descriptor) -> String {
        characteristicPath + "/desc" + hex(descriptor.handle)
    }

    /// What a path under a device names: a characteristic (its value handle) or a descriptor.
    public enum Target: Sendable, Equatable {
        /// A characteristic, by value handle.
        case characteristic(valueHandle: UInt16)
        /// A descriptor, by handle, with its characteristic's value handle.
        case descriptor(handle: UInt16, characteristic: UInt16)
    }

    /// Every object of `server` under `devicePath`, in bluetoothd's order (a service, then each
    /// characteristic followed by its descriptors), with their properties while connected with
    /// `mtu`. `notifying` and `acquired` say which characteristics (by value handle) have
    /// sessions.
    public static func objects(
        of server: GATTServer, devicePath: String, link: GATTLink
    ) -> [(path: String, interface: String, properties: [Property])] {
        var list: [(String, String, [Property])] = []
        for service in server.services {
            let servicePath = path(device: devicePath, service: service)
            list.append(
                (
                    servicePath, BlueZInterface.gattService,
                    [
                        Property("UUID", .string(service.uuid.uuidString)),
                        Property("Device", .objectPath(devicePath)),
                        Property("Primary", .bool(service.primary)),
                        Property(
                            "Includes",
                            .objectPaths(
                                service.includes.filter(server.services.indices.contains).map {
                                    path(device: devicePath, service: server.services[$0])
                                })),
                    ]
                ))
            for chrc in service.characteristics {
                let chrcPath = path(service: servicePath, characteristic: chrc)
                list.append(
                    (chrcPath, BlueZInterface.gattCharacteristic, characteristicProperties(chrc, servicePath, link)))
                for desc in chrc.descriptors {
                    list.append(
                        (
                            path(characteristic: chrcPath, descriptor: desc), BlueZInterface.gattDescriptor,
                            [
                                Property("UUID", .string(desc.uuid.uuidString)),
                                Property("Characteristic", .objectPath(chrcPath)),
                                Property("Value", .bytes(link.cache[desc.handle] ?? [])),
                            ]
                        ))
                }
            }
        }
        return list
    }

    static func characteristicProperties(
        _ chrc: GATTServer.Characteristic, _ servicePath: String, _ link: GATTLink
    ) -> [Property] {
        var list = [
            Property("UUID", .string(chrc.uuid.uuidString)),
            Property("Service", .objectPath(servicePath)),
            Property("Value", .bytes(link.cache[chrc.valueHandle] ?? [])),
        ]
        if chrc.canSubscribe {
            list.append(Property("Notifying", .bool(link.isNotifying(chrc.valueHandle))))
        }
        list.append(Property("Flags", .strings(clientFlags(chrc.flags))))
        if chrc.flags.properties.contains(.writeWithoutResponse) {
            list.append(Property("WriteAcquired", .bool(link.writeAcquired.contains(chrc.valueHandle))))
        }
        if chrc.flags.properties.contains(.notify) {
            list.append(Property("NotifyAcquired", .bool(link.notifyAcquired[chrc.valueHandle] != nil)))
        }
        if link.connected { list.append(Property("MTU", .uint16(link.mtu))) }
        return list
    }

    /// What `path` (under `devicePath`) names in `server`, if anything.
    public static func target(path: String, devicePath: String, in server: GATTServer) -> Target? {
        for service in server.services {
            let servicePath = Self.path(device: devicePath, service: service)
            guard path.hasPrefix(servicePath + "/") else { continue }
            for chrc in service.characteristics {
                let chrcPath = Self.path(service: servicePath, characteristic: chrc)
                if path == chrcPath { return .characteristic(valueHandle: chrc.valueHandle) }
                for desc in chrc.descriptors where path == Self.path(characteristic: chrcPath, descriptor: desc) {
                    return .descriptor(handle: desc.handle, characteristic: chrc.valueHandle)
                }
            }
        }
        return nil
    }

    /// The path of the characteristic with `valueHandle`.
    public static func characteristicPath(valueHandle: UInt16, devicePath: String, in server: GATTServer) -> String? {
        for service in server.services {
            for chrc in service.characteristics where chrc.valueHandle == valueHandle {
                return path(service: path(device: devicePath, service: service), characteristic: chrc)
            }
        }
        return nil
    }

    /// The Flags bluetoothd's gatt-client shows for a remote characteristic: its properties,
    /// then its extended properties, in `chrc_props` order.
    public static func clientFlags(_ flags: BlueZGATTFlags.Characteristic) -> [String] {
        let table: [(CharacteristicProperties, String)] = [
            (.broadcast, "broadcast"), (.read, "read"), (.writeWithoutResponse, "write-without-response"),
            (.write, "write"), (.notify, "notify"), (.indicate, "indicate"),
            (.authenticatedSignedWrites, "authenticated-signed-writes"), (.extendedProperties, "extended-properties"),
        ]
        var names = table.filter { flags.properties.contains($0.0) }.map(\.1)
        if flags.extendedProperties.contains(.reliableWrite) { names.append("reliable-write") }
        if flags.extendedProperties.contains(.writableAuxiliaries) { names.append("writable-auxiliaries") }
        return names
    }
}
