import BLE
import DBus
import GATT

extension BlueZPeripheralBackend {
    /// Withdraws the current application (UnregisterApplication when bluetoothd
    /// knows it, then unexport) and, unless `services` is empty, exports and
    /// registers a new one. Called with ``registrations`` held.
    func replaceApplication(adapter: String, services: [GATTService]) async throws(BLEError) {
        if let old = state.withLock({ $0.application }) {
            if old.registered, let path = try? ObjectPath(old.adapter) {
                _ = try? await callBluetoothd(
                    path, Self.gattManager, "UnregisterApplication", [.objectPath(old.layout.root)])
            }
            state.withLock { $0.application = nil }
            failPending("the application was replaced")
            for path in old.layout.paths.reversed() { try? connection.objects.unexport(path) }
            try? connection.objects.unexport(old.layout.root)
        }
        guard !services.isEmpty else { return }
        let adapterPath: ObjectPath
        let layout: GATTApplicationLayout
        do {
            adapterPath = try ObjectPath(adapter)
            let generation = state.withLock { state in
                state.generation += 1
                return state.generation
            }
            layout = try GATTApplicationLayout(root: options.root.appending("app\(generation)"), services: services)
            try export(layout, adapter: adapter)
        } catch {
            throw BLEError(.failed, message: "exporting the GATT application: \(error)")
        }
        state.withLock { $0.application = Application(adapter: adapter, layout: layout, registered: false) }
        _ = await bluetoothdName()  // the authorize hook must know it before bluetoothd reads our objects
        do {
            _ = try await callBluetoothd(
                adapterPath, Self.gattManager, "RegisterApplication",
                [.objectPath(layout.root), .dictionary(key: .string, value: .variant, [])])
        } catch {
            state.withLock { $0.application = nil }
            for path in layout.paths.reversed() { try? connection.objects.unexport(path) }
            try? connection.objects.unexport(layout.root)
            if PeripheralErrors.isAccessDenied(error) { continuation.yield(.accessDenied) }
            throw PeripheralErrors.bleError(error, doing: "RegisterApplication")
        }
        state.withLock { $0.application?.registered = true }
    }

    /// Exports the LEAdvertisement1 object and registers it. Called with
    /// ``registrations`` held, after ``withdrawAdvertisement()``.
    func exportAndRegister(adapter: String, _ data: AdvertisingData, extended: Bool) async throws(BLEError) {
        let adapterPath: ObjectPath
        let path: ObjectPath
        do {
            adapterPath = try ObjectPath(adapter)
            let generation = state.withLock { state in
                state.generation += 1
                return state.generation
            }
            path = try options.root.appending("advertisement\(generation)")
            try connection.objects.export(
                path, interfaces: [advertisementInterface(data, extended: extended, path: path)],
                authorize: authorizer)
        } catch {
            throw BLEError(.failed, message: "exporting the advertisement: \(error)")
        }
        _ = await bluetoothdName()
        // No free instance: say so plainly instead of bluetoothd's "Maximum advertisements reached".
        if let instances = try? await advertisingInstances(adapter: adapter), instances.supported == 0 {
            try? connection.objects.unexport(path)
            throw BLEError(
                .failed, message: "no free advertising instance on \(adapter) (\(instances.active) active)")
        }
        state.withLock { $0.advertisement = Advertisement(adapter: adapter, path: path, registered: false) }
        do {
            _ = try await callBluetoothd(
                adapterPath, Self.advertisingManager, "RegisterAdvertisement",
                [.objectPath(path), .dictionary(key: .string, value: .variant, [])])
        } catch {
            state.withLock { $0.advertisement = nil }
            try? connection.objects.unexport(path)
            if PeripheralErrors.isAccessDenied(error) { continuation.yield(.accessDenied) }
            throw PeripheralErrors.bleError(error, doing: "RegisterAdvertisement")
        }
        state.withLock { $0.advertisement?.registered = true }
    }

    /// UnregisterAdvertisement (when bluetoothd knows it; errors ignored: the
    /// object goes either way) and unexport.
    func withdrawAdvertisement() async {
        guard let old = state.withLock({ $0.advertisement }) else { return }
        state.withLock { $0.advertisement = nil }
        if old.registered, let adapterPath = try? ObjectPath(old.adapter) {
            _ = try? await callBluetoothd(
                adapterPath, Self.advertisingManager, "UnregisterAdvertisement", [.objectPath(old.path)])
        }
        try? connection.objects.unexport(old.path)
    }

    /// bluetoothd called Release on the advertisement at `path`. It does so
    /// when it drops the advertisement (timeout, adapter gone) and also while
    /// it exits; only in the first case is the advertisement over. A call back
    /// to bluetoothd tells them apart: a daemon that is exiting never answers
    /// (the bus fails the call when it leaves), then the advertisement is kept
    /// to be registered again with the next bluetoothd.
    func released(path: ObjectPath, by sender: String) async {
        guard let current = state.withLock({ $0.advertisement }), current.path == path,
            let adapterPath = try? ObjectPath(current.adapter)
        else { return }
        do {
            _ = try await connection.call(
                destination: sender, path: adapterPath, interface: "org.freedesktop.DBus.Properties", member: "Get",
                arguments: [.string(Self.advertisingManager), .string("ActiveInstances")], timeout: .seconds(10))
        } catch {
            state.withLock { state in
                if state.advertisement?.path == path { state.advertisement?.registered = false }
            }
            return
        }
        try? await registrations.run { () throws(BLEError) in
            guard state.withLock({ $0.advertisement?.path }) == path else { return }
            state.withLock { $0.advertisement = nil }
            try? connection.objects.unexport(path)
        }
        continuation.yield(.advertisementReleased)
    }

    /// LEAdvertisingManager1's `SupportedInstances` (free advertising slots,
    /// as bluetoothd counts them) and `ActiveInstances` on `adapter`.
    public func advertisingInstances(adapter: String) async throws(BLEError) -> (supported: Int, active: Int) {
        do {
            let path = try ObjectPath(adapter)
            let reply = try await callBluetoothd(
                path, "org.freedesktop.DBus.Properties", "GetAll", [.string(Self.advertisingManager)])
            let properties = try reply.arguments().first
            return (
                Int(properties?["SupportedInstances"]?.integerValue ?? 0),
                Int(properties?["ActiveInstances"]?.integerValue ?? 0)
            )
        } catch {
            throw PeripheralErrors.bleError(error, doing: "reading LEAdvertisingManager1")
        }
    }

    /// What `adapter` offers for advertising, from LEAdvertisingManager1's
    /// `SupportedSecondaryChannels` and (with `bluetoothd -E`)
    /// `SupportedCapabilities` (see ``AdvertisingCapabilities/init(secondaryChannels:maxAdvLen:)``).
    public func advertisingCapabilities(adapter: String) async throws(BLEError) -> AdvertisingCapabilities {
        do {
            let path = try ObjectPath(adapter)
            let reply = try await callBluetoothd(
                path, "org.freedesktop.DBus.Properties", "GetAll", [.string(Self.advertisingManager)])
            return Self.advertisingCapabilities(from: try reply.arguments().first)
        } catch {
            throw PeripheralErrors.bleError(error, doing: "reading LEAdvertisingManager1")
        }
    }

    /// The capabilities in LEAdvertisingManager1's GetAll reply (a{sv}). Pure.
    public static func advertisingCapabilities(from properties: DBusValue?) -> AdvertisingCapabilities {
        let secondary = properties?["SupportedSecondaryChannels"].map { value in
            (value.arrayValue ?? []).compactMap(\.stringValue)
        }
        let maxAdvLen = properties?["SupportedCapabilities"]?["MaxAdvLen"]?.integerValue.map { Int($0) }
        return AdvertisingCapabilities(secondaryChannels: secondary, maxAdvLen: maxAdvLen)
    }

    /// The current owner of bluetoothd's name (looked up when not known yet).
    func bluetoothdName() async -> String {
        if let known = state.withLock({ $0.bluetoothd }) { return known }
        let owner = try? await connection.getNameOwner(options.service)
        if let owner { state.withLock { $0.bluetoothd = owner } }
        return owner ?? options.service
    }

    /// Calls a method on bluetoothd.
    func callBluetoothd(
        _ path: ObjectPath, _ interface: String, _ member: String, _ arguments: [DBusValue]
    ) async throws -> DBusMessage {
        try await connection.call(
            destination: options.service, path: path, interface: interface, member: member, arguments: arguments)
    }
}
