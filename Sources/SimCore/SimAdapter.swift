import GATT

/// One simulated adapter (`/org/bluez/hciN`) as a pure state machine: its Adapter1 state,
/// its discovery sessions and its device objects. Every operation returns the events the shell
/// emits on D-Bus, in order; operations that bluetoothd would refuse throw its `BlueZError`.
public struct SimAdapter: Sendable {
    /// N in hciN.
    public let index: Int
    /// What the scenario says about it.
    public let spec: AdapterSpec
    /// Its object path, `/org/bluez/hciN`.
    public let path: String
    /// Seconds an unseen temporary device lives (0: until discovery stops).
    public var temporaryTimeout: Double
    /// Whether experimental properties are served, as `bluetoothd -E` does.
    public let experimental: Bool

    /// `Powered`.
    public internal(set) var powered: Bool
    /// The alias a client set (empty resets to the name).
    public internal(set) var alias: String?
    /// `Discoverable`.
    public internal(set) var discoverable = false
    /// `DiscoverableTimeout`, seconds.
    public internal(set) var discoverableTimeout: UInt32 = 180
    /// `Pairable` (false, as bluetoothd 5.66 reports it with no agent asking otherwise).
    public internal(set) var pairable = false
    /// `PairableTimeout`, seconds.
    public internal(set) var pairableTimeout: UInt32 = 0
    /// `Discovering`.
    public internal(set) var discovering = false
    /// The discovery sessions.
    public internal(set) var sessions: DiscoverySessions
    /// Device objects by address.
    public internal(set) var devices: [DeviceAddress: RemoteDevice] = [:]
    /// Advertisement reports put on the bus since start: each one that added a device object or
    /// changed its properties (what a client scanning with DuplicateData receives per report).
    public internal(set) var advertisementReports: UInt64 = 0
    /// The advertisement monitors in effect (activated), in activation order.
    public internal(set) var monitors: [SimMonitor] = []

    var discoverableByDiscovery = false
    var foundDuringDiscovery: Set<DeviceAddress> = []
    /// When each temporary device is next looked at for expiry.
    var expiries = ExpiryQueue<DeviceAddress>()
    /// Devices whose timer ran out while they were connected: they go once disconnected.
    var expiredWhileConnected: Set<DeviceAddress> = []
    /// What each monitor with RSSI thresholds knows of each device it matched (bluetoothd's
    /// `adv_monitor_device`); entries go with the monitor or the device.
    var monitorDevices: [MonitorDeviceKey: MonitorDeviceState] = [:]
    /// When each found device's lost timer runs out (bluetoothd's `lost_timer`).
    var monitorLostTimers = ExpiryQueue<MonitorDeviceKey>()

    /// The adapter `index` as `spec` describes it.
    public init(
        index: Int, spec: AdapterSpec, temporaryTimeout: Double = 30, proximityRule: ProximityRule = .bluez566,
        experimental: Bool = false
    ) {
        self.experimental = experimental
        self.index = index
        self.spec = spec
        self.path = "/org/bluez/hci\(index)"
        self.temporaryTimeout = temporaryTimeout
        self.powered = spec.powered
        self.sessions = DiscoverySessions(adapterTransport: .dual, proximityRule: proximityRule)
    }

    /// The object path of the device at `address` under this adapter.
    public func devicePath(_ address: DeviceAddress) -> String { path + "/" + address.objectPathComponent }

    /// The device whose object path is `devicePath`, if this adapter has it.
    public func device(atPath devicePath: String) -> RemoteDevice? {
        let prefix = path + "/dev_"
        guard devicePath.hasPrefix(prefix) else { return nil }
        let text = String(devicePath.dropFirst(prefix.count).map { $0 == "_" ? ":" : $0 })
        guard let address = DeviceAddress(text), let device = devices[address], self.devicePath(address) == devicePath
        else { return nil }
        return device
    }

    /// `Alias`: the alias, else the name.
    public var displayAlias: String { alias ?? spec.name }

    /// Every Adapter1 property, in bluetoothd's table order.
    public var properties: [Property] {
        [
            Property("Address", .string(spec.address.description)),
            Property("AddressType", .string(spec.addressType.rawValue)),
            Property("Name", .string(spec.name)),
            Property("Alias", .string(displayAlias)),
            Property("Class", .uint32(0)),
            Property("Powered", .bool(powered)),
            Property("Discoverable", .bool(discoverable)),
            Property("DiscoverableTimeout", .uint32(discoverableTimeout)),
            Property("Pairable", .bool(pairable)),
            Property("PairableTimeout", .uint32(pairableTimeout)),
            Property("Discovering", .bool(discovering)),
            Property("UUIDs", .strings(Self.localUUIDs)),
            Property("Modalias", .string("usb:v1D6Bp0246d0542")),
            Property("Roles", .strings(["central", "peripheral"])),
        ]
    }

    /// The local services bluetoothd registers by default (GAP, GATT, Device Information).
    public static let localUUIDs = [
        "00001800-0000-1000-8000-00805f9b34fb", "00001801-0000-1000-8000-00805f9b34fb",
        "0000180a-0000-1000-8000-00805f9b34fb",
    ]

    // MARK: Settable properties

    /// Sets `Powered`. Powering off ends every discovery session (Discovering goes false) and
    /// removes temporary devices that are not connectable.
    public mutating func setPowered(_ on: Bool) -> [AdapterEvent] {
        guard on != powered else { return [] }
        powered = on
        guard !on else { return [.adapterChanged([Property("Powered", .bool(true))])] }
        sessions.removeAll()
        var events = cleanUpDiscovery()
        var changed = [Property("Discovering", .bool(false))]
        discovering = false
        if discoverableByDiscovery {
            discoverableByDiscovery = false
            discoverable = false
            changed.append(Property("Discoverable", .bool(false)))
        }
        changed.append(Property("Powered", .bool(false)))
        events.append(.adapterChanged(changed))
        return events
    }

    /// Sets `Alias`; "" returns it to the system name.
    public mutating func setAlias(_ value: String) -> [AdapterEvent] {
        alias = value.isEmpty ? nil : value
        return [.adapterChanged([Property("Alias", .string(displayAlias))])]
    }

    /// Sets `Discoverable`: `Failed "Not Powered"` while powered off.
    public mutating func setDiscoverable(_ on: Bool) throws(BlueZError) -> [AdapterEvent] {
        guard powered else { throw BluetoothdError.failed("Not Powered") }
        discoverableByDiscovery = false
        guard on != discoverable else { return [] }
        discoverable = on
        return [.adapterChanged([Property("Discoverable", .bool(on))])]
    }

    /// Sets `Pairable`.
    public mutating func setPairable(_ on: Bool) -> [AdapterEvent] {
        guard on != pairable else { return [] }
        pairable = on
        return [.adapterChanged([Property("Pairable", .bool(on))])]
    }

    /// Sets `DiscoverableTimeout`.
    public mutating func setDiscoverableTimeout(_ seconds: UInt32) -> [AdapterEvent] {
        discoverableTimeout = seconds
        return [.adapterChanged([Property("DiscoverableTimeout", .uint32(seconds))])]
    }

    /// Sets `PairableTimeout`.
    public mutating func setPairableTimeout(_ seconds: UInt32) -> [AdapterEvent] {
        pairableTimeout = seconds
        return [.adapterChanged([Property("PairableTimeout", .uint32(seconds))])]
    }
}

/// Device1's settable properties.
extension SimAdapter {
    /// Sets a device's `Alias` ("" returns it to the name, else the address). DoesNotExist for
    /// an unknown device.
    public mutating func setDeviceAlias(
        _ address: DeviceAddress, _ alias: String
    ) throws(BlueZError)
        -> [AdapterEvent]
    {
        guard var device = devices[address] else { throw BluetoothdError.doesNotExist }
        device.alias = alias.isEmpty ? nil : alias
        devices[address] = device
        return [.deviceChanged(address, changed: [Property("Alias", .string(device.displayAlias))], invalidated: [])]
    }

    /// Sets a device's `Trusted`. DoesNotExist for an unknown device.
    public mutating func setTrusted(_ address: DeviceAddress, _ on: Bool) throws(BlueZError) -> [AdapterEvent] {
        guard var device = devices[address] else { throw BluetoothdError.doesNotExist }
        guard device.trusted != on else { return [] }
        device.trusted = on
        devices[address] = device
        return [.deviceChanged(address, changed: [Property("Trusted", .bool(on))], invalidated: [])]
    }

    /// Sets a device's `Blocked`; blocking keeps the device (it stops being temporary, unless its
    /// address is private), as bluetoothd stores it. DoesNotExist for an unknown device.
    public mutating func setBlocked(_ address: DeviceAddress, _ on: Bool) throws(BlueZError) -> [AdapterEvent] {
        guard var device = devices[address] else { throw BluetoothdError.doesNotExist }
        guard device.blocked != on else { return [] }
        device.blocked = on
        if on, !address.isPrivate(type: device.addressType) {
            device.temporary = false
            device.expiry = nil
        }
        devices[address] = device
        return [.deviceChanged(address, changed: [Property("Blocked", .bool(on))], invalidated: [])]
    }
}
