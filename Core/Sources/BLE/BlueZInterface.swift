/// The BlueZ D-Bus interface names the BLE layer mirrors.
public enum BlueZInterface {
    /// `org.bluez.Adapter1`.
    public static let adapter = "org.bluez.Adapter1"
    /// `org.bluez.Device1`.
    public static let device = "org.bluez.Device1"
    /// `org.bluez.GattService1`.
    public static let gattService = "org.bluez.GattService1"
    /// `org.bluez.GattCharacteristic1`.
    public static let gattCharacteristic = "org.bluez.GattCharacteristic1"
    /// `org.bluez.GattDescriptor1`.
    public static let gattDescriptor = "org.bluez.GattDescriptor1"
    /// `org.bluez.LEAdvertisingManager1`.
    public static let advertisingManager = "org.bluez.LEAdvertisingManager1"
    /// `org.bluez.GattManager1`.
    public static let gattManager = "org.bluez.GattManager1"
    /// `org.bluez.AdvertisementMonitorManager1` (bluetoothd 5.66: only with experimental features, `-E`).
    public static let advertisementMonitorManager = "org.bluez.AdvertisementMonitorManager1"
    /// `org.bluez.AdvertisementMonitor1`, served by the client.
    public static let advertisementMonitor = "org.bluez.AdvertisementMonitor1"
    /// `org.bluez`, the well-known bus name of bluetoothd.
    public static let busName = "org.bluez"
}

/// Interfaces and their properties at one object path, as in a
/// GetManagedObjects reply (`a{sa{sv}}`).
public typealias InterfaceMap = [String: PropertyMap]

/// A whole object tree, as GetManagedObjects returns it (`a{oa{sa{sv}}}`).
public typealias ObjectTreeSnapshot = [String: InterfaceMap]

/// A change signalled by bluetoothd after (or while) the tree was read.
public enum ObjectTreeDelta: Hashable, Sendable {
    /// ObjectManager.InterfacesAdded.
    case interfacesAdded(path: String, interfaces: InterfaceMap)
    /// ObjectManager.InterfacesRemoved.
    case interfacesRemoved(path: String, interfaces: [String])
    /// Properties.PropertiesChanged on `path`.
    case propertiesChanged(path: String, interface: String, changed: PropertyMap, invalidated: [String])

    /// The object path the delta is about.
    public var path: String {
        switch self {
        case .interfacesAdded(let path, _), .interfacesRemoved(let path, _), .propertiesChanged(let path, _, _, _):
            path
        }
    }
}

/// What changed in the mirror, for the managers to react to.
public enum ObjectTreeChange: Hashable, Sendable {
    /// `interface` appeared at `path`.
    case added(path: String, interface: String)
    /// Properties `keys` of `interface` at `path` changed value.
    case changed(path: String, interface: String, keys: [String])
    /// `interface` disappeared from `path` (or the mirror dropped a stale device).
    case removed(path: String, interface: String)
    /// A PropertiesChanged arrived for an object the mirror does not hold
    /// (e.g. a device it pruned that advertises again): the shell should read
    /// all its properties (Properties.GetAll) and feed them as InterfacesAdded.
    case needsRefresh(path: String, interface: String)

    /// The object path the change is about.
    public var path: String {
        switch self {
        case .added(let path, _), .changed(let path, _, _), .removed(let path, _), .needsRefresh(let path, _): path
        }
    }
}
