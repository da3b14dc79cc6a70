import DBus
import GATT
import SimCore

/// The org.bluez interfaces blesim exports, described for the object server: property types
/// and access as bluetoothd declares them, and handlers that forward to the `SimHost`.
struct BlueZInterfaces: Sendable {
    let host: SimHost
    let objects: ObjectServer
    let experimental: Bool
    /// The adapters' peripheral role (the battery plugin reads a local application's level).
    let local: LocalInterfaces

    /// Device1 property types (bluetoothd's `device_properties` table).
    static let deviceTypes: [(String, String, ExportedProperty.Access)] = [
        ("Address", "s", .read), ("AddressType", "s", .read), ("Name", "s", .read), ("Alias", "s", .readWrite),
        ("Appearance", "q", .read), ("Paired", "b", .read), ("Bonded", "b", .read), ("Trusted", "b", .readWrite),
        ("Blocked", "b", .readWrite), ("LegacyPairing", "b", .read), ("RSSI", "n", .read), ("Connected", "b", .read),
        ("UUIDs", "as", .read), ("Adapter", "o", .read), ("ManufacturerData", "a{qv}", .read),
        ("ServiceData", "a{sv}", .read), ("TxPower", "n", .read), ("ServicesResolved", "b", .read),
        ("Class", "u", .read), ("Icon", "s", .read), ("Modalias", "s", .read), ("WakeAllowed", "b", .readWrite),
    ]

    /// Device1 properties served only with `--experimental`, as `bluetoothd -E`.
    static let experimentalDeviceTypes: [(String, String, ExportedProperty.Access)] = [
        ("AdvertisingFlags", "ay", .read)
    ]

    /// Adapter1 property types (bluetoothd's `adapter_properties` table).
    static let adapterTypes: [(String, String, ExportedProperty.Access)] = [
        ("Address", "s", .read), ("AddressType", "s", .read), ("Name", "s", .read), ("Alias", "s", .readWrite),
        ("Class", "u", .read), ("Powered", "b", .readWrite), ("Discoverable", "b", .readWrite),
        ("DiscoverableTimeout", "u", .readWrite), ("Pairable", "b", .readWrite), ("PairableTimeout", "u", .readWrite),
        ("Discovering", "b", .read), ("UUIDs", "as", .read), ("Modalias", "s", .read), ("Roles", "as", .read),
        ("ExperimentalFeatures", "as", .read),
    ]

    // MARK: Adapter1

    func adapter(index: Int, properties: [Property]) throws -> ExportedInterface {
        let values = Dictionary(properties.map { ($0.name, DBusMapping.value($0.value)) }, uniquingKeysWith: { $1 })
        let declared = try Self.adapterTypes.map { (name, signature, access) in
            if name == "Alias" {
                return try ExportedProperty.writable(
                    name, type: DBusType(signature), value: values[name], update: adapterAliasUpdate(index: index))
            }
            return try ExportedProperty(
                name, type: DBusType(signature), access: access, value: values[name],
                setter: access == .readWrite ? adapterSetter(index: index, name: name) : nil)
        }
        return try ExportedInterface(
            BlueZInterface.adapter,
            methods: [
                ExportedMethod("StartDiscovery", in: "", out: "") { call in
                    try run { () throws(BlueZError) in
                        try host.request(adapter: index) { adapter throws(BlueZError) in
                            ((), try adapter.startDiscovery(owner: call.sender))
                        }
                    }
                    return []
                },
                ExportedMethod("StopDiscovery", in: "", out: "") { call in
                    try run { () throws(BlueZError) in
                        try host.request(adapter: index) { adapter throws(BlueZError) in
                            ((), try adapter.stopDiscovery(owner: call.sender))
                        }
                    }
                    return []
                },
                ExportedMethod("SetDiscoveryFilter", inputs: [DBusArgument("properties", try DBusType("a{sv}"))]) {
                    call in
                    let entries = try Self.dictionaryEntries(call.arguments().first)
                    try run { () throws(BlueZError) in
                        try host.request(adapter: index) { adapter throws(BlueZError) in
                            ((), try adapter.setDiscoveryFilter(owner: call.sender, entries))
                        }
                    }
                    return []
                },
                ExportedMethod("GetDiscoveryFilters", outputs: [DBusArgument("filters", try DBusType("as"))]) { _ in
                    [.array(.string, DiscoveryFilter.keys.map(DBusValue.string))]
                },
                ExportedMethod("RemoveDevice", inputs: [DBusArgument("device", .objectPath)]) { call in
                    guard case .objectPath(let path)? = try call.arguments().first else {
                        throw DBusMapping.error(BluetoothdError.invalidArguments)
                    }
                    try run { () throws(BlueZError) in
                        try host.request(adapter: index) { adapter throws(BlueZError) in
                            ((), try adapter.removeDevice(path: path.rawValue))
                        }
                    }
                    return []
                },
            ],
            properties: declared)
    }

    /// Alias: "" returns to the name, and the name is what is stored and reported, as bluetoothd.
    private func adapterAliasUpdate(index: Int) -> ExportedProperty.Update {
        { requested, _ in
            guard case .string(let alias) = requested.unwrapped else {
                throw DBusMapping.error(BluetoothdError.invalidArguments)
            }
            return try run { () throws(BlueZError) in
                try host.request(adapter: index, suppressing: ("/org/bluez/hci\(index)", "Alias")) {
                    adapter throws(BlueZError) in
                    let events = adapter.setAlias(alias)
                    return (DBusValue.string(adapter.displayAlias), events)
                }
            }
        }
    }

    private func adapterSetter(index: Int, name: String) -> ExportedProperty.Setter {
        { value, _ in
            if name == "Powered", case .boolean(let on) = value.unwrapped {
                host.update { world, _ in
                    world.setPowered(adapter: index, on).compactMap { batch in
                        // The object server announces the remote Set of Powered itself.
                        let events = batch.events.compactMap { event -> AdapterEvent? in
                            guard case .adapterChanged(let changed) = event else { return event }
                            let kept = changed.filter { $0.name != "Powered" }
                            return kept.isEmpty ? nil : .adapterChanged(kept)
                        }
                        return events.isEmpty ? nil : SimWorld.Batch(adapter: batch.adapter, events: events)
                    }
                }
                return
            }
            try run { () throws(BlueZError) in
                try host.request(adapter: index, suppressing: ("/org/bluez/hci\(index)", name)) {
                    adapter throws(BlueZError) in
                    switch (name, value.unwrapped) {
                    case ("Discoverable", .boolean(let on)): return ((), try adapter.setDiscoverable(on))
                    case ("Pairable", .boolean(let on)): return ((), adapter.setPairable(on))
                    case ("DiscoverableTimeout", .uint32(let seconds)):
                        return ((), adapter.setDiscoverableTimeout(seconds))
                    case ("PairableTimeout", .uint32(let seconds)): return ((), adapter.setPairableTimeout(seconds))
                    case ("Alias", .string(let alias)): return ((), adapter.setAlias(alias))
                    default: throw BluetoothdError.invalidArguments
                    }
                }
            }
        }
    }

    /// The a{sv} argument of SetDiscoveryFilter as SimCore's entries.
    static func dictionaryEntries(_ argument: DBusValue?) throws -> [(key: String, value: FilterArgument)] {
        guard case .dictionary(_, _, let entries)? = argument else {
            throw DBusMapping.error(BluetoothdError.invalidArguments)
        }
        return try entries.map { entry in
            guard let key = entry.key.stringValue else { throw DBusMapping.error(BluetoothdError.invalidArguments) }
            return (key, DBusMapping.filterArgument(entry.value))
        }
    }

    // MARK: Device1

    /// Device1 at `path` (called with the host's lock held: builds handlers, calls nothing).
    /// `org.bluez.Battery1` (battery.c's table: `Percentage`, and `Source` only with
    /// `--experimental`, as its flag says).
    func battery(properties: [Property]) throws -> ExportedInterface {
        let values = Dictionary(properties.map { ($0.name, DBusMapping.value($0.value)) }, uniquingKeysWith: { $1 })
        var declared = [try ExportedProperty("Percentage", type: .byte, access: .read, value: values["Percentage"])]
        if experimental {
            declared.append(try ExportedProperty("Source", type: .string, access: .read, value: values["Source"]))
        }
        return try ExportedInterface(BlueZInterface.battery, methods: [], properties: declared)
    }

    func device(path: String, properties: [Property]) throws -> ExportedInterface {
        let values = Dictionary(properties.map { ($0.name, DBusMapping.value($0.value)) }, uniquingKeysWith: { $1 })
        let types = Self.deviceTypes + (experimental ? Self.experimentalDeviceTypes : [])
        let located = SimWorld.parse(devicePath: path)
        let declared = try types.map { (name, signature, access) in
            if name == "Alias", let located {
                return try ExportedProperty.writable(
                    name, type: DBusType(signature), value: values[name],
                    update: deviceAliasUpdate(path: path, at: located))
            }
            return try ExportedProperty(
                name, type: DBusType(signature), access: access, value: values[name],
                setter: access == .readWrite ? located.map { deviceSetter(path: path, at: $0, name: name) } : nil)
        }
        let notSupported: ExportedMethod.Handler = { _ in throw DBusMapping.error(BluetoothdError.notSupported) }
        return try ExportedInterface(
            BlueZInterface.device,
            methods: [
                ExportedMethod("Connect", in: "", out: "") { call in
                    guard let located else { throw DBusMapping.error(BluetoothdError.doesNotExist) }
                    try await connect(located.adapter, located.address, call)
                    return []
                },
                ExportedMethod("Disconnect", in: "", out: "") { call in
                    guard let located else { return [] }
                    disconnect(located.adapter, located.address, call)
                    return []
                },
                ExportedMethod("ConnectProfile", in: "s", out: "", handler: notSupported),
                ExportedMethod("DisconnectProfile", in: "s", out: "", handler: notSupported),
                ExportedMethod("Pair", in: "", out: "", handler: notSupported),
                ExportedMethod("CancelPairing", in: "", out: "") { _ in
                    throw DBusMapping.error(BluetoothdError.doesNotExist)
                },
            ],
            properties: declared)
    }

    /// A device's Alias: "" returns to the name (else the address), which is what is stored.
    private func deviceAliasUpdate(
        path: String, at location: (adapter: Int, address: DeviceAddress)
    )
        -> ExportedProperty.Update
    {
        { requested, _ in
            guard case .string(let alias) = requested.unwrapped else {
                throw DBusMapping.error(BluetoothdError.invalidArguments)
            }
            return try run { () throws(BlueZError) in
                try host.request(adapter: location.adapter, suppressing: (path, "Alias")) {
                    adapter throws(BlueZError) in
                    let events = try adapter.setDeviceAlias(location.address, alias)
                    return (DBusValue.string(adapter.devices[location.address]?.displayAlias ?? alias), events)
                }
            }
        }
    }

    private func deviceSetter(
        path: String, at location: (adapter: Int, address: DeviceAddress), name: String
    )
        -> ExportedProperty.Setter
    {
        { value, _ in
            try run { () throws(BlueZError) in
                try host.request(adapter: location.adapter, suppressing: (path, name)) { adapter throws(BlueZError) in
                    switch (name, value.unwrapped) {
                    case ("Alias", .string(let alias)): return ((), try adapter.setDeviceAlias(location.address, alias))
                    case ("Trusted", .boolean(let on)): return ((), try adapter.setTrusted(location.address, on))
                    case ("Blocked", .boolean(let on)): return ((), try adapter.setBlocked(location.address, on))
                    default: return ((), [])
                    }
                }
            }
        }
    }

    /// Device1.Connect: `Connected` true before the reply; the GATT objects and
    /// `ServicesResolved` after it (bluetoothd resolves services once connected).
    private func connect(_ adapter: Int, _ address: DeviceAddress, _ call: DBusMethodCall) async throws {
        let attempt = { [host] () throws in
            try self.run { () throws(BlueZError) in
                try host.world { world, now throws(BlueZError) in
                    (try world.beginConnect(adapter: adapter, address: address, at: now), [])
                }
            }
        }
        var outcome = try attempt()
        if case .waits(let error, let seconds) = outcome {
            // Listen for the device as the kernel does: every 50 ms (an advertising interval's order),
            // until it is heard or the connection attempt times out.
            let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
            while case .waits = outcome {
                guard ContinuousClock.now < deadline else { throw DBusMapping.error(error) }
                try await Task.sleep(for: .milliseconds(50))
                outcome = try attempt()
            }
        }
        switch outcome {
        case .alreadyConnected: return
        case .waits(let error, _): throw DBusMapping.error(error)
        case .fails(let error, let delay):
            try await Task.sleep(for: .milliseconds(Int(delay * 1000)))
            throw DBusMapping.error(error)
        case .connects(let delay):
            try await Task.sleep(for: .milliseconds(Int(delay * 1000)))
            host.update { world, _ in world.completeConnect(adapter: adapter, address: address) }
            call.flushSignals()
            let host = self.host
            let local = self.local
            call.afterReply {
                host.update { world, _ in world.resolveServices(adapter: adapter, address: address) }
                local.probeBattery(adapter: adapter, address: address)
            }
        }
    }

    /// Device1.Disconnect: `ServicesResolved` false before the reply, `Connected` false after.
    private func disconnect(_ adapter: Int, _ address: DeviceAddress, _ call: DBusMethodCall) {
        host.update { world, _ in world.beginDisconnect(adapter: adapter, address: address) }
        call.flushSignals()
        let host = self.host
        call.afterReply {
            host.update { world, _ in world.linkLost(adapter: adapter, address: address) }
        }
    }

    // MARK: /org/bluez

    /// AgentManager1, accepting agents (nothing asks them anything: blesim does not pair).
    func agentManager() throws -> ExportedInterface {
        try ExportedInterface(
            "org.bluez.AgentManager1",
            methods: [
                ExportedMethod("RegisterAgent", in: "os", out: "") { _ in [] },
                ExportedMethod("UnregisterAgent", in: "o", out: "") { _ in [] },
                ExportedMethod("RequestDefaultAgent", in: "o", out: "") { _ in [] },
            ])
    }

    /// Runs `body`, turning a bluetoothd error into the D-Bus error reply.
    private func run<R>(_ body: () throws(BlueZError) -> R) throws -> R {
        do {
            return try body()
        } catch {
            throw DBusMapping.error(error)
        }
    }
}
