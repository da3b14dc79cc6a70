import BLE

/// BlueZ's adapters (`org.bluez.Adapter1` at `/org/bluez/hciN`) as the BLE
/// layer sees them: ``AdapterStatus`` values, named as users name them.
public enum BlueZAdapter {
    /// The name of the adapter at `path`: its last path component (`hci0`
    /// for `/org/bluez/hci0`).
    public static func name(ofAdapterAt path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// The status of the adapter at `path` from its Adapter1 properties
    /// (`Address`, `Powered`; unpowered when BlueZ does not say).
    public static func status(path: String, properties: PropertyMap) -> AdapterStatus {
        AdapterStatus(
            id: path, name: name(ofAdapterAt: path), address: properties["Address"]?.stringValue,
            powered: properties["Powered"]?.boolValue ?? false)
    }
}

/// The central backend's adapters, decoded from the tree bluetoothd serves
/// and kept in the order of the event stream: a snapshot's tree goes on
/// without its Adapter1 interfaces and with the adapters they describe, a
/// signal about an Adapter1 becomes ``CentralBackendEvent/adapterUpdated(_:)``
/// or ``CentralBackendEvent/adapterRemoved(id:)`` when the adapter's status
/// (address, power) changed. Like ``ObjectTreeMirror`` for the rest of the
/// tree, a snapshot keeps what adapter signals newer than its reply said
/// (by D-Bus serial): those that came before it are replayed on top of it.
///
/// Used by ``BlueZCentralBackend`` (under its event gate's lock) and by test
/// backends that are fed BlueZ's tree. A signal about anything but an adapter
/// passes with one comparison of its interface name.
public struct BlueZAdapterTable: Sendable {
    /// At most this many adapter signals are kept for the next snapshot (the
    /// oldest go first); only changes of an adapter's address or power count.
    public static let maximumRecentSignals = 64

    private var adapters: [String: AdapterStatus] = [:]
    private var recent: [(delta: ObjectTreeDelta, serial: UInt32)] = []

    /// No adapters known.
    public init() {}

    /// bluetoothd left: forget every adapter.
    public mutating func reset() {
        adapters = [:]
        recent = []
    }

    /// A GetManagedObjects reply with serial `serial` (when known): takes
    /// the Adapter1 interfaces out of `tree` (objects left with none go too)
    /// and returns the adapters they describe, by id, with the adapter
    /// signals newer than the reply applied on top.
    public mutating func snapshot(_ tree: inout ObjectTreeSnapshot, serial: UInt32?) -> [AdapterStatus] {
        var table: [String: AdapterStatus] = [:]
        for (path, interfaces) in tree {
            guard let properties = interfaces[BlueZInterface.adapter] else { continue }
            table[path] = BlueZAdapter.status(path: path, properties: properties)
        }
        for path in table.keys {
            tree[path]?[BlueZInterface.adapter] = nil
            if tree[path]?.isEmpty == true { tree[path] = nil }
        }
        adapters = table
        let newer = recent.filter { entry in serial.map { entry.serial > $0 } ?? false }
        recent = []
        for entry in newer { apply(entry.delta, serial: entry.serial) { _ in } }
        return adapters.keys.sorted().compactMap { adapters[$0] }
    }

    /// A signal with serial `serial` (when known): `deliver` gets the adapter
    /// event it makes, if any, then the delta without its Adapter1 part, if
    /// anything is left.
    public mutating func signal(
        _ delta: ObjectTreeDelta, serial: UInt32?, deliver: (CentralBackendEvent) -> Void
    ) {
        switch delta {
        case .propertiesChanged(_, let interface, _, _) where interface != BlueZInterface.adapter:
            deliver(.delta(delta, serial: serial))
        case .propertiesChanged:
            apply(delta, serial: serial, deliver: deliver)
        case .interfacesAdded(let path, var interfaces):
            guard interfaces[BlueZInterface.adapter] != nil else { return deliver(.delta(delta, serial: serial)) }
            apply(delta, serial: serial, deliver: deliver)
            interfaces[BlueZInterface.adapter] = nil
            if !interfaces.isEmpty {
                deliver(.delta(.interfacesAdded(path: path, interfaces: interfaces), serial: serial))
            }
        case .interfacesRemoved(let path, let interfaces):
            guard interfaces.contains(BlueZInterface.adapter) else { return deliver(.delta(delta, serial: serial)) }
            apply(delta, serial: serial, deliver: deliver)
            let others = interfaces.filter { $0 != BlueZInterface.adapter }
            if !others.isEmpty { deliver(.delta(.interfacesRemoved(path: path, interfaces: others), serial: serial)) }
        }
    }

    /// Applies the Adapter1 part of `delta`; an event when the status changed.
    private mutating func apply(
        _ delta: ObjectTreeDelta, serial: UInt32?, deliver: (CentralBackendEvent) -> Void
    ) {
        let path = delta.path
        let before = adapters[path]
        switch delta {
        case .interfacesAdded(_, let interfaces):
            guard let properties = interfaces[BlueZInterface.adapter] else { return }
            adapters[path] = BlueZAdapter.status(path: path, properties: properties)
        case .interfacesRemoved:
            adapters[path] = nil
        case .propertiesChanged(_, _, let changed, let invalidated):
            var status =
                before ?? AdapterStatus(id: path, name: BlueZAdapter.name(ofAdapterAt: path), powered: false)
            if let address = changed["Address"]?.stringValue { status.address = address }
            if let powered = changed["Powered"]?.boolValue { status.powered = powered }
            if invalidated.contains("Address") { status.address = nil }
            if invalidated.contains("Powered") { status.powered = false }
            adapters[path] = status
        }
        let after = adapters[path]
        guard after != before else { return }
        if let serial {
            if recent.count >= Self.maximumRecentSignals { recent.removeFirst() }
            recent.append((delta, serial))
        }
        if let after { deliver(.adapterUpdated(after)) } else { deliver(.adapterRemoved(id: path)) }
    }
}
