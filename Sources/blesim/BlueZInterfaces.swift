import DBus
import GATT
import SimCore

/// The org.bluez interfaces blesim exports, described for the object server: property types
/// and access as bluetoothd declares them, and handlers that forward to the `SimHost`.
struct BlueZInterfaces: Sendable {
    let host: SimHost
    let objects: ObjectServer
    let experimental: Bool

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
            try ExportedProperty(
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

    private func adapterSetter(index: Int, name: String) -> ExportedProperty.Setter {
        { value, _ in
            try run { () throws(BlueZError) in
                try host.request(adapter: index, suppressing: ("/org/bluez/hci\(index)", name)) {
                    adapter throws(BlueZError) in
                    switch (name, value.unwrapped) {
                    case ("Powered", .boolean(let on)): return ((), adapter.setPowered(on))
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
    func device(path: String, properties: [Property]) throws -> ExportedInterface {
        let values = Dictionary(properties.map { ($0.name, DBusMapping.value($0.value)) }, uniquingKeysWith: { $1 })
        let types = Self.deviceTypes + (experimental ? Self.experimentalDeviceTypes : [])
        let located = SimWorld.parse(devicePath: path)
        let declared = try types.map { (name, signature, access) in
            try ExportedProperty(
                name, type: DBusType(signature), access: access, value: values[name],
                setter: access == .readWrite ? located.map { deviceSetter(path: path, at: $0, name: name) } : nil)
        }
        let notSupported: ExportedMethod.Handler = { _ in throw DBusMapping.error(BluetoothdError.notSupported) }
        return try ExportedInterface(
            BlueZInterface.device,
            methods: [
                ExportedMethod("Connect", in: "", out: "", handler: notSupported),
                ExportedMethod("Disconnect", in: "", out: "") { _ in
                    throw DBusMapping.error(BluetoothdError.notConnected)
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

    // MARK: /org/bluez

    /// AgentManager1, accepting agents (nothing asks them anything yet: pairing is a later slice).
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
    private func run(_ body: () throws(BlueZError) -> Void) throws {
        do {
            try body()
        } catch {
            throw DBusMapping.error(error)
        }
    }
}
