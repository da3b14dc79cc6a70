import GATT

/// The indices ``ObjectTreeMirror`` keeps beside its objects, each updated
/// for the path a delta touches only.
struct ObjectTreeIndex: Sendable {
    /// The direct children of each path: every object, and every path that
    /// holds no object but leads to one, is linked to its parent.
    private(set) var children: [String: Set<String>] = [:]
    var adapters: Set<String> = []
    /// Every device (an object with Device1), complete or not.
    var devices: [String: DeviceEntry] = [:]
    var connectedDevices: Set<String> = []
    var devicesByAdapter: [String: Set<String>] = [:]
    var paths: [PeripheralIdentifier: String] = [:]
    var services = AttributeIndex(parentKey: "Device")
    var characteristics = AttributeIndex(parentKey: "Service")
    var descriptors = AttributeIndex(parentKey: "Characteristic")

    /// Links a new object at `path` to its parent, and that parent to its own
    /// if it was not linked yet.
    mutating func link(_ path: String, in objects: ObjectTreeSnapshot) {
        var child = path
        while let parent = Self.parent(of: child) {
            let inserted = children[parent, default: []].insert(child).inserted
            guard inserted, children[parent]?.count == 1, objects[parent] == nil else { return }
            child = parent
        }
    }

    /// Unlinks `path`, whose object is gone, unless objects below it remain;
    /// parents that led only to it go too.
    mutating func unlink(_ path: String, in objects: ObjectTreeSnapshot) {
        var child = path
        while children[child]?.isEmpty ?? true, objects[child] == nil, let parent = Self.parent(of: child) {
            children[child] = nil
            children[parent]?.remove(child)
            guard children[parent]?.isEmpty ?? true else { return }
            children[parent] = nil
            child = parent
        }
    }

    /// `path` and every path below it that holds an object or leads to one.
    func subtree(of path: String) -> [String] {
        var result: [String] = []
        var stack = [path]
        while let next = stack.popLast() {
            result.append(next)
            stack += children[next] ?? []
        }
        return result
    }

    /// The parent of `path` (`/org/bluez` for `/org/bluez/hci0`), nil for `/`.
    static func parent(of path: String) -> String? {
        guard path != "/", let slash = path.lastIndex(of: "/") else { return nil }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}

/// What the index keeps per device, in one entry so a signal looks it up once.
struct DeviceEntry: Sendable {
    /// Device1.Adapter (else the parent path).
    var adapter: String
    /// Device1.Connected.
    var connected = false
    /// Neither connected nor paired: subject to expiry.
    var prunable = true
    /// The typed view, when the device is complete (it has an Address).
    var model: DeviceModel?
    /// Its identifier, when its adapter's address is known too.
    var identifier: PeripheralIdentifier?

    /// The device was heard with Device1 `properties`, `keys` of them
    /// changed: the typed view reads again what depends on them. Returns
    /// whether it is prunable and whether its identity (address, type) may
    /// have changed.
    mutating func heard(_ path: String, _ properties: PropertyMap, keys: [String]) -> (Bool, Bool) {
        guard !keys.isEmpty else { return (prunable, false) }
        guard model != nil, properties["Address"] != nil else {
            model = DeviceModel(path: path, adapterPath: adapter, device1: properties)
            return (prunable, true)
        }
        model?.update(adapterPath: adapter, device1: properties, keys: keys)
        return (prunable, keys.contains { $0 == "Address" || $0 == "AddressType" })
    }
}

/// GATT objects of one interface grouped by their owner (the object named by
/// `parentKey`, else the parent path), with their parsed UUIDs.
struct AttributeIndex: Sendable {
    let parentKey: String
    private(set) var members: [String: Set<String>] = [:]
    private(set) var owners: [String: String] = [:]
    private(set) var uuids: [String: BluetoothUUID] = [:]

    init(parentKey: String) {
        self.parentKey = parentKey
    }

    /// Records the object at `path` with its properties (nil: it is gone).
    mutating func set(_ path: String, _ properties: PropertyMap?) {
        guard let properties else {
            if let owner = owners.removeValue(forKey: path) { removeMember(path, of: owner) }
            uuids[path] = nil
            return
        }
        uuids[path] = properties["UUID"]?.stringValue.flatMap { BluetoothUUID($0) }
        let owner = properties[parentKey]?.stringValue ?? ObjectTreeIndex.parent(of: path) ?? "/"
        let previous = owners.updateValue(owner, forKey: path)
        guard previous != owner else { return }
        if let previous { removeMember(path, of: previous) }
        members[owner, default: []].insert(path)
    }

    /// Whether a change of `keys` needs ``set(_:_:)`` again.
    func isAffected(by keys: [String]) -> Bool {
        keys.contains { $0 == "UUID" || $0 == parentKey }
    }

    /// The members of `owner`, in path (handle) order.
    func members(of owner: String) -> [String] {
        (members[owner] ?? []).sorted()
    }

    private mutating func removeMember(_ path: String, of owner: String) {
        members[owner]?.remove(path)
        if members[owner]?.isEmpty == true { members[owner] = nil }
    }
}

extension ObjectTreeMirror {
    /// `interface` appeared at `path` with `properties`.
    mutating func indexAdded(_ path: String, _ interface: String, _ properties: PropertyMap, now: BLEInstant) {
        switch interface {
        case BlueZInterface.adapter:
            index.adapters.insert(path)
            refreshIdentifiers(ofAdapter: path)
        case BlueZInterface.device:
            deviceChanged(path, properties, keys: nil, now: now)
        case BlueZInterface.gattService:
            index.services.set(path, properties)
        case BlueZInterface.gattCharacteristic:
            index.characteristics.set(path, properties)
        case BlueZInterface.gattDescriptor:
            index.descriptors.set(path, properties)
        default:
            break
        }
    }

    /// Properties `keys` of `interface` at `path` changed, to `properties`
    /// (no keys: the device was heard all the same).
    mutating func indexChanged(
        _ path: String, _ interface: String, _ properties: PropertyMap, keys: [String], now: BLEInstant
    ) {
        switch interface {
        case BlueZInterface.adapter where keys.contains("Address"):
            refreshIdentifiers(ofAdapter: path)
        case BlueZInterface.device:
            deviceChanged(path, properties, keys: keys, now: now)
        case BlueZInterface.gattService where index.services.isAffected(by: keys):
            index.services.set(path, properties)
        case BlueZInterface.gattCharacteristic where index.characteristics.isAffected(by: keys):
            index.characteristics.set(path, properties)
        case BlueZInterface.gattDescriptor where index.descriptors.isAffected(by: keys):
            index.descriptors.set(path, properties)
        default:
            break
        }
    }

    /// `interface` disappeared from `path`.
    mutating func indexRemoved(_ path: String, _ interface: String) {
        switch interface {
        case BlueZInterface.adapter:
            index.adapters.remove(path)
            refreshIdentifiers(ofAdapter: path)
        case BlueZInterface.device:
            forgetDevice(path)
        case BlueZInterface.gattService:
            index.services.set(path, nil)
        case BlueZInterface.gattCharacteristic:
            index.characteristics.set(path, nil)
        case BlueZInterface.gattDescriptor:
            index.descriptors.set(path, nil)
        default:
            break
        }
    }

    /// Brings the device's entry up to date after its Device1 changed `keys`
    /// (nil: it appeared; none: it was heard, nothing changed): adapter,
    /// link, recency, typed view, identifier. An advertisement (no change of
    /// adapter, link or pairing) looks the entry up once.
    private mutating func deviceChanged(_ path: String, _ properties: PropertyMap, keys: [String]?, now: BLEInstant) {
        if let keys, !keys.contains(where: { $0 == "Adapter" || $0 == "Connected" || $0 == "Paired" }) {
            guard let (prunable, identityChanged) = index.devices[path]?.heard(path, properties, keys: keys) else {
                return
            }
            if prunable { recency.touch(path, at: now) }
            if identityChanged { refreshIdentifier(path) }
            return
        }
        let adapter = properties["Adapter"]?.stringValue ?? ObjectTreeIndex.parent(of: path) ?? "/"
        let connected = properties["Connected"]?.boolValue ?? false
        let prunable = !connected && properties["Paired"]?.boolValue != true
        let existing = index.devices.removeValue(forKey: path)
        var entry = existing ?? DeviceEntry(adapter: adapter)
        if existing?.adapter != adapter {
            if let previous = existing?.adapter { index.devicesByAdapter[previous]?.remove(path) }
            index.devicesByAdapter[adapter, default: []].insert(path)
        }
        if existing == nil || existing?.connected != connected {
            if connected { index.connectedDevices.insert(path) } else { index.connectedDevices.remove(path) }
        }
        entry.adapter = adapter
        entry.connected = connected
        entry.prunable = prunable
        if let keys, existing != nil {
            _ = entry.heard(path, properties, keys: keys)
        } else {
            entry.model = DeviceModel(path: path, adapterPath: adapter, device1: properties)
        }
        index.devices[path] = entry
        if prunable { recency.touch(path, at: now) } else { recency.remove(path) }
        refreshIdentifier(path)
    }

    private mutating func forgetDevice(_ path: String) {
        guard let entry = index.devices.removeValue(forKey: path) else { return }
        index.connectedDevices.remove(path)
        index.devicesByAdapter[entry.adapter]?.remove(path)
        if index.devicesByAdapter[entry.adapter]?.isEmpty == true { index.devicesByAdapter[entry.adapter] = nil }
        if let identifier = entry.identifier, index.paths[identifier] == path { index.paths[identifier] = nil }
        recency.remove(path)
    }

    private mutating func refreshIdentifiers(ofAdapter adapter: String) {
        for path in index.devicesByAdapter[adapter] ?? [] { refreshIdentifier(path) }
    }

    /// Recomputes the identifier of the device at `path` (its adapter's address, its address and type).
    private mutating func refreshIdentifier(_ path: String) {
        guard let entry = index.devices[path] else { return }
        var identifier: PeripheralIdentifier?
        if let model = entry.model,
            let adapterAddress = objects[model.adapterPath]?[BlueZInterface.adapter]?["Address"]?.stringValue
        {
            identifier = PeripheralIdentifier(
                adapter: adapterAddress, address: model.address, addressType: model.addressType)
        }
        let previous = entry.identifier
        guard previous != identifier else { return }
        if let previous, index.paths[previous] == path { index.paths[previous] = nil }
        index.devices[path]?.identifier = identifier
        if let identifier { index.paths[identifier] = path }
    }
}
