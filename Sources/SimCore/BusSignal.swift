/// The D-Bus interface names blesim serves, as bluetoothd names them.
public enum BlueZInterface {
    /// `org.bluez.Adapter1`
    public static let adapter = "org.bluez.Adapter1"
    /// `org.bluez.Device1`
    public static let device = "org.bluez.Device1"
    /// `org.bluez.GattManager1`
    public static let gattManager = "org.bluez.GattManager1"
    /// `org.bluez.LEAdvertisingManager1`
    public static let advertisingManager = "org.bluez.LEAdvertisingManager1"
    /// `org.bluez.AdvertisementMonitorManager1`
    public static let advertisementMonitorManager = "org.bluez.AdvertisementMonitorManager1"
    /// `org.bluez.AdvertisementMonitor1`
    public static let advertisementMonitor = "org.bluez.AdvertisementMonitor1"
}

/// A signal the shell emits, already addressed: the D-Bus form of `AdapterEvent`s.
public enum BusSignal: Sendable, Equatable {
    /// `org.freedesktop.DBus.ObjectManager.InterfacesAdded` on `/`.
    case interfacesAdded(path: String, interfaces: [(name: String, properties: [Property])])
    /// `org.freedesktop.DBus.ObjectManager.InterfacesRemoved` on `/`.
    case interfacesRemoved(path: String, interfaces: [String])
    /// `org.freedesktop.DBus.Properties.PropertiesChanged` on `path`.
    case propertiesChanged(path: String, interface: String, changed: [Property], invalidated: [String])
    /// Not a signal: the properties of `interface` at `path` change without PropertiesChanged.
    case propertiesSetSilently(path: String, interface: String, changed: [Property])
    /// Not a signal: `value` written to the AcquireNotify socket of the characteristic at `path`.
    case socketNotification(path: String, value: [UInt8])
    /// Not a signal: a call of LEAdvertisement1.Release on `owner`'s object at `path`.
    case advertisementReleased(owner: String, path: String)
    /// Not a signal: the application characteristic `path` of `owner` has no subscriber left.
    case applicationUnsubscribed(owner: String, path: String)
    /// Not a signal: a call of AdvertisementMonitor1.DeviceFound(`device`) on `owner`'s monitor at `monitor`.
    case monitorDeviceFound(owner: String, monitor: String, device: String)
    /// Not a signal: a call of AdvertisementMonitor1.DeviceLost(`device`) on `owner`'s monitor at `monitor`.
    case monitorDeviceLost(owner: String, monitor: String, device: String)

    public static func == (lhs: BusSignal, rhs: BusSignal) -> Bool {
        switch (lhs, rhs) {
        case (.interfacesAdded(let p1, let i1), .interfacesAdded(let p2, let i2)):
            p1 == p2 && i1.map(\.name) == i2.map(\.name) && i1.map(\.properties) == i2.map(\.properties)
        case (.interfacesRemoved(let p1, let i1), .interfacesRemoved(let p2, let i2)):
            p1 == p2 && i1 == i2
        case (.propertiesChanged(let p1, let f1, let c1, let v1), .propertiesChanged(let p2, let f2, let c2, let v2)):
            p1 == p2 && f1 == f2 && c1 == c2 && v1 == v2
        case (.propertiesSetSilently(let p1, let f1, let c1), .propertiesSetSilently(let p2, let f2, let c2)):
            p1 == p2 && f1 == f2 && c1 == c2
        case (.socketNotification(let p1, let v1), .socketNotification(let p2, let v2)): p1 == p2 && v1 == v2
        case (.advertisementReleased(let o1, let p1), .advertisementReleased(let o2, let p2)): o1 == o2 && p1 == p2
        case (.applicationUnsubscribed(let o1, let p1), .applicationUnsubscribed(let o2, let p2)):
            o1 == o2 && p1 == p2
        case (.monitorDeviceFound(let o1, let m1, let d1), .monitorDeviceFound(let o2, let m2, let d2)),
            (.monitorDeviceLost(let o1, let m1, let d1), .monitorDeviceLost(let o2, let m2, let d2)):
            o1 == o2 && m1 == m2 && d1 == d2
        default: false
        }
    }
}

extension SimWorld.Batch {
    /// These events as the signals bluetoothd would emit, in order.
    public func signals(in world: SimWorld) -> [BusSignal] {
        guard world.adapters.indices.contains(adapter) else { return [] }
        let owner = world.adapters[adapter]
        let adapterState = owner
        return events.map { event in
            switch event {
            case .adapterChanged(let changed):
                .propertiesChanged(
                    path: owner.path, interface: BlueZInterface.adapter, changed: changed, invalidated: [])
            case .deviceAdded(let address, let properties):
                .interfacesAdded(
                    path: owner.devicePath(address), interfaces: [(name: BlueZInterface.device, properties: properties)]
                )
            case .deviceChanged(let address, let changed, let invalidated):
                .propertiesChanged(
                    path: owner.devicePath(address), interface: BlueZInterface.device, changed: changed,
                    invalidated: invalidated)
            case .deviceChangedSilently(let address, let changed):
                .propertiesSetSilently(
                    path: owner.devicePath(address), interface: BlueZInterface.device, changed: changed)
            case .deviceRemoved(let address):
                .interfacesRemoved(path: owner.devicePath(address), interfaces: [BlueZInterface.device])
            case .objectAdded(let path, let interface, let properties):
                .interfacesAdded(path: path, interfaces: [(name: interface, properties: properties)])
            case .objectChanged(let path, let interface, let changed, let invalidated):
                .propertiesChanged(path: path, interface: interface, changed: changed, invalidated: invalidated)
            case .objectRemoved(let path, let interfaces):
                .interfacesRemoved(path: path, interfaces: interfaces)
            case .socketNotification(let path, let value):
                .socketNotification(path: path, value: value)
            case .advertisementReleased(let owner, let path):
                .advertisementReleased(owner: owner, path: path)
            case .applicationUnsubscribed(let owner, let path):
                .applicationUnsubscribed(owner: owner, path: path)
            case .monitorDeviceFound(let owner, let monitor, let device):
                .monitorDeviceFound(owner: owner, monitor: monitor, device: adapterState.devicePath(device))
            case .monitorDeviceLost(let owner, let monitor, let device):
                .monitorDeviceLost(owner: owner, monitor: monitor, device: adapterState.devicePath(device))
            }
        }
    }
}

extension SimWorld {
    /// Every object blesim serves with its interfaces and properties: the answer to
    /// `GetManagedObjects` on `/` (each adapter, then its devices by address).
    public var managedObjects: [(path: String, interfaces: [(name: String, properties: [Property])])] {
        var objects: [(path: String, interfaces: [(name: String, properties: [Property])])] = []
        for adapter in adapters {
            objects.append((adapter.path, [(BlueZInterface.adapter, adapter.properties)]))
            for address in adapter.devices.keys.sorted() {
                guard let device = adapter.devices[address] else { continue }
                objects.append(
                    (
                        adapter.devicePath(address),
                        [
                            (
                                BlueZInterface.device,
                                device.properties(adapterPath: adapter.path, experimental: adapter.experimental)
                            )
                        ]
                    ))
            }
        }
        return objects
    }

    /// The adapter index and device address behind an object path, if blesim serves it.
    public func locate(path: String) -> (adapter: Int, device: DeviceAddress?)? {
        for adapter in adapters {
            if path == adapter.path { return (adapter.index, nil) }
            if path.hasPrefix(adapter.path + "/dev_"), let device = adapter.device(atPath: path) {
                return (adapter.index, device.address)
            }
        }
        return nil
    }
}

extension SimWorld {
    /// The adapter index and address a device object path names
    /// (`/org/bluez/hciN/dev_AA_BB_CC_DD_EE_FF`), whether or not the device exists.
    public static func parse(devicePath path: String) -> (adapter: Int, address: DeviceAddress)? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0].isEmpty, parts[1] == "org", parts[2] == "bluez", parts[3].hasPrefix("hci"),
            let index = Int(parts[3].dropFirst(3)), parts[4].hasPrefix("dev_")
        else { return nil }
        let text = String(parts[4].dropFirst(4).map { $0 == "_" ? ":" : $0 })
        guard let address = DeviceAddress(text) else { return nil }
        return (index, address)
    }
}
