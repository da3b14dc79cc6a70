import GATT

/// The indices ``ObjectTreeMirror`` keeps beside its objects, each updated
/// for the path a delta touches only.
struct ObjectTreeIndex: Sendable {
    /// The direct children of each path: every object, and every path that
    /// holds no object but leads to one, is linked to its parent.
    private(set) var children: [String: Set<String>] = [:]
    var adapters: Set<String> = []
    var devices: Set<String> = []
    var connectedDevices: Set<String> = []
    var devicesByAdapter: [String: Set<String>] = [:]
    var adapterOfDevice: [String: String] = [:]
    /// The typed view of each complete device (one with an Address).
    var models: [String: DeviceModel] = [:]
    var identifiers: [String: PeripheralIdentifier] = [:]
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
    /// `interface` appeared at `path`.
    mutating func indexAdded(_ path: String, _ interface: String, now: BLEInstant) {
        switch interface {
        case BlueZInterface.adapter:
            index.adapters.insert(path)
            refreshIdentifiers(ofAdapter: path)
        case BlueZInterface.device:
            refreshDevice(path, keys: nil, now: now)
        case BlueZInterface.gattService:
            index.services.set(path, objects[path]?[interface])
        case BlueZInterface.gattCharacteristic:
            index.characteristics.set(path, objects[path]?[interface])
        case BlueZInterface.gattDescriptor:
            index.descriptors.set(path, objects[path]?[interface])
        default:
            break
        }
    }

    /// Properties `keys` of `interface` at `path` changed (none: the device was heard all the same).
    mutating func indexChanged(_ path: String, _ interface: String, keys: [String], now: BLEInstant) {
        switch interface {
        case BlueZInterface.adapter where keys.contains("Address"):
            refreshIdentifiers(ofAdapter: path)
        case BlueZInterface.device:
            refreshDevice(path, keys: keys, now: now)
        case BlueZInterface.gattService where index.services.isAffected(by: keys):
            index.services.set(path, objects[path]?[interface])
        case BlueZInterface.gattCharacteristic where index.characteristics.isAffected(by: keys):
            index.characteristics.set(path, objects[path]?[interface])
        case BlueZInterface.gattDescriptor where index.descriptors.isAffected(by: keys):
            index.descriptors.set(path, objects[path]?[interface])
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

    /// Brings the device's entries up to date after its Device1 changed
    /// `keys` (nil: appeared): adapter, link, recency, typed view, identifier.
    private mutating func refreshDevice(_ path: String, keys: [String]?, now: BLEInstant) {
        guard let properties = objects[path]?[BlueZInterface.device] else { return }
        index.devices.insert(path)
        let adapter = properties["Adapter"]?.stringValue ?? ObjectTreeIndex.parent(of: path) ?? "/"
        let previousAdapter = index.adapterOfDevice.updateValue(adapter, forKey: path)
        if previousAdapter != adapter {
            if let previousAdapter { index.devicesByAdapter[previousAdapter]?.remove(path) }
            index.devicesByAdapter[adapter, default: []].insert(path)
        }
        let connected = properties["Connected"]?.boolValue ?? false
        if connected { index.connectedDevices.insert(path) } else { index.connectedDevices.remove(path) }
        if connected || properties["Paired"]?.boolValue == true {
            recency.remove(path)
        } else {
            recency.touch(path, at: now)
        }
        guard let keys, index.models[path] != nil else {
            index.models[path] = DeviceModel(path: path, adapterPath: adapter, device1: properties)
            refreshIdentifier(path)
            return
        }
        guard !keys.isEmpty else { return }
        if properties["Address"] == nil {
            index.models[path] = nil
        } else {
            index.models[path]?.update(adapterPath: adapter, device1: properties, keys: keys)
        }
        if keys.contains(where: { $0 == "Address" || $0 == "AddressType" || $0 == "Adapter" }) {
            refreshIdentifier(path)
        }
    }

    private mutating func forgetDevice(_ path: String) {
        index.devices.remove(path)
        index.connectedDevices.remove(path)
        if let adapter = index.adapterOfDevice.removeValue(forKey: path) {
            index.devicesByAdapter[adapter]?.remove(path)
            if index.devicesByAdapter[adapter]?.isEmpty == true { index.devicesByAdapter[adapter] = nil }
        }
        index.models[path] = nil
        recency.remove(path)
        refreshIdentifier(path)
    }

    private mutating func refreshIdentifiers(ofAdapter adapter: String) {
        for path in index.devicesByAdapter[adapter] ?? [] { refreshIdentifier(path) }
    }

    /// Recomputes the identifier of the device at `path` (its adapter's address, its address and type).
    private mutating func refreshIdentifier(_ path: String) {
        var identifier: PeripheralIdentifier?
        if let model = index.models[path],
            let adapterAddress = objects[model.adapterPath]?[BlueZInterface.adapter]?["Address"]?.stringValue
        {
            identifier = PeripheralIdentifier(
                adapter: adapterAddress, address: model.address, addressType: model.addressType)
        }
        let previous = index.identifiers[path]
        guard previous != identifier else { return }
        if let previous, index.paths[previous] == path { index.paths[previous] = nil }
        index.identifiers[path] = identifier
        if let identifier { index.paths[identifier] = path }
    }
}
