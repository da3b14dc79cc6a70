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
    /// The sockets applications handed out through their AcquireNotify / AcquireWrite, by
    /// `socketKey` (bluetoothd's `notify_io` / `write_io` per characteristic).
    private let appSockets = AcquiredSockets()
    /// Application AcquireWrite calls awaiting their reply, by `socketKey`: writes arriving
    /// meanwhile wait for it (gatt-database.c queues them in `pending_writes`).
    private let writeAcquisitions = Mutex<[String: Task<Result<Void, ATTError>?, Never>]>([:])
    /// Application AcquireNotify calls awaiting their reply, by `socketKey`.
    private let acquiring = Mutex<Set<String>>([])

    /// Subscription changes for applications, carried out one at a time in the order the world
    /// decided them, each once the reply of the call that caused it is out: bluetoothd calls an
    /// application's StartNotify on the central's CCC write, which the central's bluetoothd has
    /// answered (Notifying true, the StartNotify reply) before any value can come back.
    private let subscriptionChanges: AsyncStream<SubscriptionChange>.Continuation

    /// One change of an application characteristic's subscription; `gate` ends when the causing
    /// call's reply is sent (nil: nothing to wait for).
    private struct SubscriptionChange: Sendable {
        let attribute: LocalAttribute
        let start: Bool
        let central: String
        let mtu: UInt16
        let gate: AsyncStream<Never>?
    }

    init(
        host: SimHost, connection: DBusConnection,
        advertising: AdvertisingFeatures = .init(extended: false, experimental: false)
    ) {
        self.host = host
        self.connection = connection
        self.advertising = advertising
        let (changes, continuation) = AsyncStream.makeStream(of: SubscriptionChange.self)
        subscriptionChanges = continuation
        Task { [weak self] in
            for await change in changes {
                if let gate = change.gate { for await _ in gate {} }
                self?.carryOut(change.attribute, start: change.start, central: change.central, mtu: change.mtu)
            }
        }
    }

    /// Queues a subscription change (see ``carryOut(_:start:central:mtu:)``) behind the earlier
    /// ones; with `call`, it waits for that call's reply.
    func subscriptionChanged(
        _ attribute: LocalAttribute, start: Bool, central: String, mtu: UInt16, after call: DBusMethodCall? = nil
    ) {
        var gate: AsyncStream<Never>? = nil
        if let call {
            let (stream, open) = AsyncStream.makeStream(of: Never.self)
            call.afterReply { open.finish() }
            gate = stream
        }
        subscriptionChanges.yield(
            SubscriptionChange(attribute: attribute, start: start, central: central, mtu: mtu, gate: gate))
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
                    if let refusal = self.host.takeRegistrationRefusal("application") {
                        throw DBusMapping.error(refusal)
                    }
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
        let task = Task {
            for await message in stream {
                guard let objectPath = message.path?.description, let arguments = try? message.arguments(),
                    arguments.count >= 2, arguments[0].stringValue == BlueZInterface.gattCharacteristic,
                    let value = LocalObjectsParser.properties(arguments[1])["Value"]?.bytesValue
                else { continue }
                self.deliver(owner: owner, path: objectPath, value: value)
            }
        }
        watches.withLock {
            $0[owner + " " + path]?.cancel(); $0[owner + " " + path] = task
        }
    }

    /// A new value of the application characteristic `path` (a Value change, or a packet on its
    /// AcquireNotify socket): a notification or indication to every subscribed central, the
    /// virtual one included; each indication's confirmation becomes a call of the application's
    /// `Confirm` (gatt-database.c's `conf_cb`).
    func deliver(owner: String, path: String, value: [UInt8]) {
        host.update { world, _ in world.localValueChanged(owner: owner, path: path, value: value) }
        let virtual = host.read { $0.virtualNotifications(owner: owner, path: path) }
        // Under the link model each confirmation comes at the link's pace (SimWorld's IndicationQueue).
        var confirmations: [Double] = []
        host.update { world, now in
            confirmations = world.scheduleLocalConfirmations(owner: owner, path: path, at: now); return []
        }
        for (adapter, uuid) in virtual {
            try? connection.emitSignal(
                path: ObjectPath(ControlInterface.path), interface: ControlInterface.name,
                member: "Notification",
                arguments: [.string("/org/bluez/hci\(adapter)"), .string(uuid.uuidString), .bytes(value)])
        }
        let connection = self.connection
        for wait in confirmations {
            let confirm: @Sendable () -> Void = {
                try? connection.callNoReply(
                    destination: owner, path: ObjectPath(path), interface: BlueZInterface.gattCharacteristic,
                    member: "Confirm")
            }
            if wait > 0 {
                Task {
                    try? await Task.sleep(for: .seconds(wait))
                    confirm()
                }
            } else {
                confirm()
            }
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
                    if let refusal = self.host.takeRegistrationRefusal("advertisement") {
                        throw DBusMapping.error(refusal)
                    }
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

    /// Calls the application attribute's ReadValue (`write` nil) or WriteValue; a write to a
    /// characteristic that offers AcquireWrite goes through its socket instead (acquired first).
    func call(
        _ attribute: LocalAttribute, write: [UInt8]?, offset: Int, mtu: UInt16, central: String
    ) async -> Result<[UInt8], ATTError> {
        if let write, attribute.offersAcquireWrite, attribute.isCharacteristic,
            let result = await writeThroughSocket(attribute, write, mtu: mtu, central: central)
        {
            return result
        }
        let access: BlueZATTErrorMapping.Access = write == nil ? .read : .write
        let member = write == nil ? "ReadValue" : "WriteValue"
        var arguments: [DBusValue] = write.map { [.bytes($0)] } ?? []
        arguments.append(Self.options(central: central, mtu: mtu, offset: offset))
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

    /// The options bluetoothd's `append_options` passes: `device`, `offset` when non-zero,
    /// `link` "LE", `mtu`.
    static func options(central: String, mtu: UInt16, offset: Int = 0) -> DBusValue {
        var options: [(key: DBusValue, value: DBusValue)] = []
        if let device = try? ObjectPath(central) { options.append((.string("device"), .variant(.objectPath(device)))) }
        if offset > 0 { options.append((.string("offset"), .variant(.uint16(UInt16(offset))))) }
        options += [(.string("link"), .variant(.string("LE"))), (.string("mtu"), .variant(.uint16(mtu)))]
        return .dictionary(key: .string, value: .variant, options)
    }

    private static func socketKey(_ kind: AcquiredSockets.Kind, _ attribute: LocalAttribute) -> String {
        kind.rawValue + " " + attribute.owner + " " + attribute.path
    }

    /// gatt-database.c's `chrc_write_cb` with `WriteAcquired`: the value goes to the socket the
    /// application's AcquireWrite returned (called once, with the options, then kept until the
    /// application closes it). The application's error answers the write (mapped with Write Not
    /// Permitted as the default); nil when bluetoothd falls back to WriteValue (an unlikely-error
    /// reply, a bad reply or a failed send).
    private func writeThroughSocket(
        _ attribute: LocalAttribute, _ value: [UInt8], mtu: UInt16, central: String
    ) async -> Result<[UInt8], ATTError>? {
        let key = Self.socketKey(.write, attribute)
        if appSockets.send(value, key: key) { return .success([]) }
        let (acquisition, first) = writeAcquisitions.withLock { table in
            if let running = table[key] { return (running, false) }
            let task = Task { await acquireWrite(attribute, key: key, mtu: mtu, central: central) }
            table[key] = task
            return (task, true)
        }
        let outcome = await acquisition.value
        if first { _ = writeAcquisitions.withLock { $0.removeValue(forKey: key) } }
        switch outcome {
        case .success?: return appSockets.send(value, key: key) ? .success([]) : nil
        case .failure(let error)?: return .failure(error)
        case nil: return nil
        }
    }

    /// Calls the application's AcquireWrite and keeps its socket under `key`: nil when the reply
    /// is unusable or an unlikely error (bluetoothd then writes with WriteValue).
    private func acquireWrite(
        _ attribute: LocalAttribute, key: String, mtu: UInt16, central: String
    ) async -> Result<Void, ATTError>? {
        do {
            let reply = try await connection.call(
                destination: attribute.owner, path: ObjectPath(attribute.path),
                interface: BlueZInterface.gattCharacteristic, member: "AcquireWrite",
                arguments: [Self.options(central: central, mtu: mtu)])
            guard case .unixFD(let fd)? = try reply.arguments().first?.unwrapped, let raw = fd.take() else {
                return nil
            }
            appSockets.adopt(raw, key: key, onPacket: { _ in }, onClose: {})
            return .success(())
        } catch let error as DBusError {
            let bluez = BlueZError(BlueZError.Name(rawValue: error.name.rawValue), error.message)
            let ecode = BlueZATTErrorMapping.attError(fromApplicationError: bluez, access: .write)
            return ecode == .unlikelyError ? nil : .failure(ecode)
        } catch {
            return nil
        }
    }

    /// bluetoothd's battery plugin on a link to a local application: it reads the application's
    /// Battery Level (its ReadValue), then `Battery1` appears and the plugin's CCC write tells
    /// the application (StartNotify or AcquireNotify). Nothing when the peer has no Battery Level.
    func probeBattery(adapter: Int, address: DeviceAddress) {
        guard let (_, attribute) = host.read({ $0.localBatteryLevel(adapter: adapter, address: address) }),
            let view = host.read({ $0.centralView(adapter: adapter, address: address) })
        else { return }
        Task {
            guard
                case .success(let value) = await call(
                    attribute, write: nil, offset: 0, mtu: view.mtu, central: view.central)
            else { return }
            var enabling = false
            host.update { world, _ in
                let (batches, turnedOn) = world.batteryRead(adapter: adapter, address: address, value: value)
                enabling = turnedOn
                return batches
            }
            if enabling { subscriptionChanged(attribute, start: true, central: view.central, mtu: view.mtu) }
        }
    }

    /// A central's CCC write turned the characteristic's notifications on (each enabling) or
    /// off (the last one), as gatt-database.c's `ccc_write_cb`: on, the application's
    /// AcquireNotify when it offers it (with the options; its socket's packets become
    /// notifications; while the socket is open a further enabling calls nothing), else
    /// StartNotify; off, the AcquireNotify socket is closed, else StopNotify. Replies are not
    /// waited for.
    private func carryOut(_ attribute: LocalAttribute, start: Bool, central: String, mtu: UInt16) {
        let key = Self.socketKey(.notify, attribute)
        if !start && appSockets.contains(key: key) {
            appSockets.shut(key: key)
            return
        }
        if start && appSockets.contains(key: key) { return }
        // While the application's AcquireNotify is unanswered bluetoothd has not counted the
        // subscription yet: a disabling then calls nothing (and the socket, once it comes,
        // stays), an enabling makes no second call.
        if acquiring.withLock({ $0.contains(key) }) { return }
        guard start, attribute.offersAcquireNotify else {
            notifyChanged(attribute, start: start)
            return
        }
        acquiring.withLock { _ = $0.insert(key) }
        let connection = self.connection
        Task {
            defer { acquiring.withLock { _ = $0.remove(key) } }
            do {
                let reply = try await connection.call(
                    destination: attribute.owner, path: ObjectPath(attribute.path),
                    interface: BlueZInterface.gattCharacteristic, member: "AcquireNotify",
                    arguments: [Self.options(central: central, mtu: mtu)])
                guard case .unixFD(let fd)? = try reply.arguments().first?.unwrapped, let raw = fd.take() else {
                    notifyChanged(attribute, start: true)
                    return
                }
                appSockets.adopt(
                    raw, key: key,
                    onPacket: { [self] bytes in deliver(owner: attribute.owner, path: attribute.path, value: bytes) },
                    onClose: {})
            } catch let error as DBusError {
                // acquire_notify_reply: NoReply and Failed end it there; other errors retry with StartNotify.
                if error.name.rawValue == "org.freedesktop.DBus.Error.NoReply"
                    || error.name.rawValue == "org.bluez.Error.Failed"
                {
                    return
                }
                notifyChanged(attribute, start: true)
            } catch {
                notifyChanged(attribute, start: true)
            }
        }
    }

    /// The last subscribed central's link went down: the application stops (its AcquireNotify
    /// socket closed, else StopNotify).
    func unsubscribed(owner: String, path: String) {
        let attribute = LocalAttribute(owner: owner, path: path, isCharacteristic: true)
        subscriptionChanged(attribute, start: false, central: "/", mtu: 23)
    }

    /// Calls the application characteristic's StartNotify or StopNotify (no arguments; no reply
    /// wanted, as bluetoothd does on a CCC write). Sent at once, so calls keep their order.
    func notifyChanged(_ attribute: LocalAttribute, start: Bool) {
        try? connection.callNoReply(
            destination: attribute.owner, path: ObjectPath(attribute.path),
            interface: BlueZInterface.gattCharacteristic, member: start ? "StartNotify" : "StopNotify")
    }
}
