import DBus
import GATT
import SimCore
import Synchronization

/// GattManager1 and LEAdvertisingManager1 on each adapter, and the calls blesim makes to the
/// applications they register (as bluetoothd's gatt-database.c and advertising.c do).
final class LocalInterfaces: Sendable {
    let host: SimHost
    let connection: DBusConnection
    /// The controllers' advertising features (`--extended-advertising`, `--experimental`).
    let advertising: AdvertisingFeatures
    /// Tasks following each application's PropertiesChanged, by "owner path".
    private let watches = Mutex<[String: Task<Void, Never>]>([:])

    init(
        host: SimHost, connection: DBusConnection,
        advertising: AdvertisingFeatures = .init(extended: false, experimental: false)
    ) {
        self.host = host
        self.connection = connection
        self.advertising = advertising
    }

    private func run<R>(_ body: () throws(BlueZError) -> R) throws -> R {
        do {
            return try body()
        } catch {
            throw DBusMapping.error(error)
        }
    }

    /// `org.bluez.GattManager1` of adapter `index`.
    func gattManager(index: Int) throws -> ExportedInterface {
        try ExportedInterface(
            BlueZInterface.gattManager,
            methods: [
                ExportedMethod("RegisterApplication", in: "oa{sv}", out: "") { call in
                    let arguments = try call.arguments()
                    guard arguments.count == 2, case .objectPath(let path) = arguments[0].unwrapped,
                        arguments[1].dictionaryEntries != nil
                    else { throw DBusMapping.error(BluetoothdError.invalidArguments) }
                    try await self.registerApplication(index: index, owner: call.sender, path: path.description)
                    return []
                },
                ExportedMethod("UnregisterApplication", in: "o", out: "") { call in
                    guard case .objectPath(let path)? = try call.arguments().first?.unwrapped else {
                        throw DBusMapping.error(BluetoothdError.invalidArguments)
                    }
                    let host = self.host
                    try self.run { () throws(BlueZError) in
                        try host.world { world, _ throws(BlueZError) in
                            (
                                (),
                                try world.unregisterApplication(
                                    adapter: index, owner: call.sender, path: path.description)
                            )
                        }
                    }
                    self.unwatch(owner: call.sender, path: path.description)
                    return []
                },
            ])
    }

    private func registerApplication(index: Int, owner: String, path: String) async throws {
        let reply: DBusMessage
        do {
            reply = try await connection.call(
                destination: owner, path: ObjectPath(path), interface: "org.freedesktop.DBus.ObjectManager",
                member: "GetManagedObjects")
        } catch {
            throw DBusMapping.error(LocalObjectsParser.noValidService)
        }
        let objects = LocalObjectsParser.objects(try reply.arguments().first)
        let host = self.host
        try run { () throws(BlueZError) in
            let application = try LocalObjectsParser.application(owner: owner, root: path, objects: objects)
            try host.world { world, now throws(BlueZError) in
                ((), try world.registerApplication(adapter: index, application, now: now))
            }
        }
        await watch(owner: owner, path: path)
    }

    /// Follows the application's Value changes: each becomes a notification to subscribed remotes.
    private func watch(owner: String, path: String) async {
        guard
            let stream = try? await connection.signals(
                .propertiesChanged(sender: owner, pathNamespace: try? ObjectPath(path)))
        else { return }
        let host = self.host
        let task = Task {
            for await message in stream {
                guard let objectPath = message.path?.description, let arguments = try? message.arguments(),
                    arguments.count >= 2, arguments[0].stringValue == BlueZInterface.gattCharacteristic,
                    let value = LocalObjectsParser.properties(arguments[1])["Value"]?.bytesValue
                else { continue }
                host.update { world, _ in world.localValueChanged(owner: owner, path: objectPath, value: value) }
                let virtual = host.read { $0.virtualNotifications(owner: owner, path: objectPath) }
                for (adapter, uuid) in virtual {
                    try? self.connection.emitSignal(
                        path: ObjectPath(ControlInterface.path), interface: ControlInterface.name,
                        member: "Notification",
                        arguments: [.string("/org/bluez/hci\(adapter)"), .string(uuid.uuidString), .bytes(value)])
                }
            }
        }
        watches.withLock {
            $0[owner + " " + path]?.cancel(); $0[owner + " " + path] = task
        }
    }

    private func unwatch(owner: String, path: String) {
        watches.withLock { $0.removeValue(forKey: owner + " " + path) }?.cancel()
    }

    /// A bus name left: stop following its applications.
    func ownerLeft(_ owner: String) {
        let tasks = watches.withLock { watches in
            let keys = watches.keys.filter { $0.hasPrefix(owner + " ") }
            return keys.compactMap { watches.removeValue(forKey: $0) }
        }
        for task in tasks { task.cancel() }
    }

    /// `org.bluez.LEAdvertisingManager1` of adapter `index`.
    func advertisingManager(index: Int) throws -> ExportedInterface {
        try ExportedInterface(
            BlueZInterface.advertisingManager,
            methods: [
                ExportedMethod("RegisterAdvertisement", in: "oa{sv}", out: "") { call in
                    let arguments = try call.arguments()
                    guard arguments.count == 2, case .objectPath(let path) = arguments[0].unwrapped,
                        arguments[1].dictionaryEntries != nil
                    else { throw DBusMapping.error(BluetoothdError.invalidArguments) }
                    try await self.registerAdvertisement(index: index, owner: call.sender, path: path.description)
                    return []
                },
                ExportedMethod("UnregisterAdvertisement", in: "o", out: "") { call in
                    guard case .objectPath(let path)? = try call.arguments().first?.unwrapped else {
                        throw DBusMapping.error(BluetoothdError.invalidArguments)
                    }
                    let host = self.host
                    try self.run { () throws(BlueZError) in
                        try host.world { world, _ throws(BlueZError) in
                            let (_, batches) = try world.removeAdvertisement(
                                adapter: index, owner: call.sender, path: path.description)
                            return ((), batches)
                        }
                    }
                    return []
                },
            ],
            properties: [
                ExportedProperty(
                    "ActiveInstances", type: .byte, access: .read, value: .byte(0)),
                ExportedProperty(
                    "SupportedInstances", type: .byte, access: .read,
                    value: .byte(UInt8(SimWorld.supportedAdvertisingInstances))),
                ExportedProperty(
                    "SupportedIncludes", type: .array(.string), access: .read,
                    value: .array(.string, ["tx-power", "appearance", "local-name"].map(DBusValue.string))),
            ] + (try advertising.properties()))
    }

    private func registerAdvertisement(index: Int, owner: String, path: String) async throws {
        let reply: DBusMessage
        do {
            reply = try await connection.call(
                destination: owner, path: ObjectPath(path), interface: "org.freedesktop.DBus.Properties",
                member: "GetAll", arguments: [.string("org.bluez.LEAdvertisement1")])
        } catch {
            throw DBusMapping.error(LocalObjectsParser.badAdvertisement)
        }
        let properties = LocalObjectsParser.properties(try reply.arguments().first ?? .array(.string, []))
        let host = self.host
        try run { () throws(BlueZError) in
            let name = host.read { $0.adapters.indices.contains(index) ? $0.adapters[index].displayAlias : "" }
            let advertisement = try advertising.check(
                LocalObjectsParser.advertisement(owner: owner, path: path, properties: properties, adapterName: name),
                properties: properties)
            try host.world { world, now throws(BlueZError) in
                ((), try world.registerAdvertisement(adapter: index, advertisement, now: now))
            }
        }
    }

    /// Calls the advertisement's Release (bluetoothd removed it: timeout, power off).
    func release(owner: String, path: String) {
        try? connection.callNoReply(
            destination: owner, path: ObjectPath(path),
            interface: "org.bluez.LEAdvertisement1", member: "Release")
    }

    // MARK: Relaying remote operations to applications

    /// Calls the application's ReadValue or WriteValue for a remote's operation with the
    /// options bluetoothd passes (device, mtu, link "LE", offset only when non-zero); the
    /// application's D-Bus error becomes the ATT error bluetoothd sends.
    func relay(
        _ operation: GATTOperation, to attribute: LocalAttribute, central: String
    ) async -> Result<
        [UInt8], ATTError
    > {
        let mtu = host.read { $0.links[LinkKey(adapter: operation.adapter, address: operation.address)]?.mtu ?? 23 }
        switch operation.request {
        case .read(let offset):
            return await call(attribute, write: nil, offset: offset, mtu: mtu, central: central)
        case .write(let bytes, let offset, _):
            return await call(attribute, write: bytes, offset: offset, mtu: mtu, central: central)
        }
    }

    /// Calls the application attribute's ReadValue (`write` nil) or WriteValue.
    func call(
        _ attribute: LocalAttribute, write: [UInt8]?, offset: Int, mtu: UInt16, central: String
    ) async -> Result<[UInt8], ATTError> {
        let access: BlueZATTErrorMapping.Access = write == nil ? .read : .write
        var options: [(key: DBusValue, value: DBusValue)] = []
        if let device = try? ObjectPath(central) { options.append((.string("device"), .variant(.objectPath(device)))) }
        options += [(.string("mtu"), .variant(.uint16(mtu))), (.string("link"), .variant(.string("LE")))]
        if offset > 0 { options.append((.string("offset"), .variant(.uint16(UInt16(offset))))) }
        let member = write == nil ? "ReadValue" : "WriteValue"
        var arguments: [DBusValue] = write.map { [.bytes($0)] } ?? []
        arguments.append(.dictionary(key: .string, value: .variant, options))
        let interface =
            attribute.isCharacteristic ? BlueZInterface.gattCharacteristic : BlueZInterface.gattDescriptor
        do {
            let reply = try await connection.call(
                destination: attribute.owner, path: ObjectPath(attribute.path), interface: interface,
                member: member, arguments: arguments)
            if access == .read { return .success(try reply.arguments().first?.bytesValue ?? []) }
            return .success([])
        } catch let error as DBusError {
            let bluez = BlueZError(BlueZError.Name(rawValue: error.name.rawValue), error.message)
            return .failure(BlueZATTErrorMapping.attError(fromApplicationError: bluez, access: access))
        } catch {
            return .failure(.unlikelyError)
        }
    }

    /// Calls the application characteristic's StartNotify or StopNotify (no arguments; the
    /// reply is not waited for, as bluetoothd does on a CCC write).
    func notifyChanged(_ attribute: LocalAttribute, start: Bool) {
        let connection = self.connection
        Task {
            _ = try? await connection.call(
                destination: attribute.owner, path: ObjectPath(attribute.path),
                interface: BlueZInterface.gattCharacteristic, member: start ? "StartNotify" : "StopNotify")
        }
    }
}
