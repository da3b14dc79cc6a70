import BLE
import DBus
import GATT

extension BlueZPeripheralBackend {
    /// The LEAdvertisement1 interface for `data`, with `Release`.
    func advertisementInterface(_ data: AdvertisingData, extended: Bool, path: ObjectPath) throws -> ExportedInterface {
        let release = try ExportedMethod("Release") { [weak self] call in
            let sender = call.sender
            if let self { Task { await self.released(path: path, by: sender) } }
            return []
        }
        return try ExportedInterface(
            "org.bluez.LEAdvertisement1", methods: [release],
            properties: AdvertisementProperties.properties(of: data, extended: extended).map {
                try Self.constant($0.0, $0.1)
            })
    }

    /// Subscribes to bluetoothd's name, its adapters' appearance and Powered,
    /// then looks bluetoothd up once.
    func watch() async throws {
        let service = options.service
        let owners = try await connection.nameOwnerChanges(of: service)
        let managers = try await connection.signals(.objectManager(sender: service, path: .root))
        let changes = try await connection.signals(.propertiesChanged(sender: service))
        let tasks = [
            Task { [weak self] in
                for await change in owners { await self?.ownerChanged(to: change.newOwner) }
            },
            Task { [weak self] in
                for await signal in managers { self?.objectManagerSignal(signal) }
            },
            Task { [weak self] in
                for await signal in changes { self?.propertiesChanged(signal) }
            },
        ]
        watchers.withLock { $0 = tasks }
        let owner = try? await connection.getNameOwner(service)
        await ownerChanged(to: owner)
    }

    /// bluetoothd left (nil) or a new one took the name: a new daemon knows
    /// nothing of our registrations, and every subscription ended.
    func ownerChanged(to owner: String?) async {
        let stopped = state.withLock { state -> [LocalCharacteristic] in
            state.bluetoothd = owner
            state.application?.registered = false
            state.advertisement?.registered = false
            state.centrals.removeAll()
            defer { state.notifying.removeAll() }
            return Array(state.notifying.keys)
        }
        failPending("bluetoothd changed")
        for characteristic in stopped {
            let adapter = state.withLock { $0.application?.adapter } ?? ""
            let address = state.withLock { $0.adapterAddresses[adapter] } ?? adapter
            continuation.yield(
                .unsubscribed(
                    central: Self.unidentifiedCentral(adapterAddress: address), characteristic: characteristic))
        }
        continuation.yield(.bluetoothdPresent(owner != nil))
        let load = owner.map { owner in Task { [weak self] () async -> Void in await self?.loadAdapters(of: owner) } }
        adapterLoad.withLock { previous in
            previous?.cancel()
            previous = load
        }
    }

    /// Asks `owner` for its objects until it answers and reports its adapters. A daemon that has just
    /// taken the name may not serve its objects yet, or be too slow for one call: a failure is tried
    /// again after 250 ms, doubling to 5 s, until `owner` answers, the bus refuses us (AccessDenied:
    /// reported, not retried) or another owner takes the name (the task is cancelled).
    func loadAdapters(of owner: String) async {
        var pause = Duration.milliseconds(250)
        while !Task.isCancelled {
            do {
                let reply = try await connection.call(
                    destination: owner, path: .root, interface: "org.freedesktop.DBus.ObjectManager",
                    member: "GetManagedObjects")
                let objects = try reply.arguments().first?.dictionaryEntries ?? []
                var adapters: [AdapterStatus] = []
                var addresses: [String: String] = [:]
                for entry in objects {
                    guard let path = entry.key.stringValue, let adapter = entry.value["org.bluez.Adapter1"] else {
                        continue
                    }
                    adapters.append(
                        AdapterStatus(
                            id: path, name: BlueZAdapter.name(ofAdapterAt: path),
                            address: adapter["Address"]?.stringValue,
                            powered: adapter["Powered"]?.boolValue ?? false))
                    addresses[path] = adapter["Address"]?.stringValue
                }
                // Reported only while `owner` still has the name: a list from a daemon that left would
                // follow the next one's arrival.
                state.withLock { state in
                    guard state.bluetoothd == owner else { return }
                    state.adapterAddresses.merge(addresses) { $1 }
                    continuation.yield(.adapters(adapters.sorted { $0.id < $1.id }))
                }
                return
            } catch {
                if PeripheralErrors.isAccessDenied(error) {
                    continuation.yield(.accessDenied)
                    return
                }
                try? await Task.sleep(for: pause)
                pause = min(pause * 2, .seconds(5))
            }
        }
    }

    func objectManagerSignal(_ signal: DBusMessage) {
        guard let arguments = try? signal.arguments(), arguments.count == 2, let path = arguments[0].stringValue
        else { return }
        switch signal.member {
        case "InterfacesAdded":
            guard let adapter = arguments[1]["org.bluez.Adapter1"] else { return }
            if let address = adapter["Address"]?.stringValue { state.withLock { $0.adapterAddresses[path] = address } }
            continuation.yield(
                .adapterUpdated(
                    .init(
                        id: path, name: BlueZAdapter.name(ofAdapterAt: path), address: adapter["Address"]?.stringValue,
                        powered: adapter["Powered"]?.boolValue ?? false)))
        case "InterfacesRemoved":
            guard arguments[1].arrayValue?.contains(where: { $0.stringValue == "org.bluez.Adapter1" }) == true
            else { return }
            continuation.yield(.adapterRemoved(id: path))
        default: return
        }
    }

    func propertiesChanged(_ signal: DBusMessage) {
        guard let arguments = try? signal.arguments(), arguments.count >= 2,
            arguments[0].stringValue == "org.bluez.Adapter1", let path = signal.path,
            let powered = arguments[1]["Powered"]?.boolValue
        else { return }
        let address = state.withLock { $0.adapterAddresses[path.rawValue] }
        continuation.yield(
            .adapterUpdated(
                .init(
                    id: path.rawValue, name: BlueZAdapter.name(ofAdapterAt: path.rawValue), address: address,
                    powered: powered)))
    }

    /// The adapter's Bluetooth address (its path when bluetoothd does not say).
    func adapterAddress(_ adapter: String) async -> String {
        if let known = state.withLock({ $0.adapterAddresses[adapter] }) { return known }
        guard let path = try? ObjectPath(adapter),
            let reply = try? await callBluetoothd(
                path, "org.freedesktop.DBus.Properties", "Get", [.string("org.bluez.Adapter1"), .string("Address")]),
            let address = (try? reply.arguments())?.first?.stringValue
        else { return adapter }
        state.withLock { $0.adapterAddresses[adapter] = address }
        return address
    }

    /// The central behind a request's `device` option: Device1's Address and
    /// AddressType read from bluetoothd once per device path; when bluetoothd
    /// does not answer, the address is read from the path
    /// (`.../dev_AA_BB_CC_DD_EE_FF`) and taken as public.
    func central(for device: ObjectPath?, adapter: String) async -> PeripheralIdentifier {
        let adapterAddress = await adapterAddress(adapter)
        guard let device else { return Self.unidentifiedCentral(adapterAddress: adapterAddress) }
        if let known = state.withLock({ $0.centrals[device] }) { return known }
        var address = device.elements.last.map { $0.dropFirst(4).split(separator: "_").joined(separator: ":") }
        var type = AddressType.public
        if let reply = try? await callBluetoothd(
            device, "org.freedesktop.DBus.Properties", "GetAll", [.string("org.bluez.Device1")]),
            let properties = (try? reply.arguments())?.first
        {
            if let text = properties["Address"]?.stringValue { address = text }
            if properties["AddressType"]?.stringValue == "random" { type = .random }
        }
        let identifier = PeripheralIdentifier(adapter: adapterAddress, address: address ?? "", addressType: type)
        state.withLock { $0.centrals[device] = identifier }
        return identifier
    }
}
