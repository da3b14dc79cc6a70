import GATT

/// The indices ``ObjectTreeMirror`` keeps beside its objects, each updated
/// for the path a delta touches only.
struct ObjectTreeIndex: Sendable {
    /// The direct children of each path: every object, and every path that
    /// holds no object but leads to one, is linked to its parent.
    private(set) var children: [String: Set<String>] = [:]
    /// The adapters' addresses by ``AdapterStatus/id``: they name their devices' identifiers.
    var adapterAddresses: [String: String] = [:]
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

/// What the index keeps per device, in one entry so a signal looks it up once:
/// its Device1 properties (the mirror's one copy of them) and what is derived
/// from them and its adapter.
struct DeviceEntry: Sendable {
    /// Device1.Adapter (else the parent path).
    var adapter: String
    /// Its Device1 properties.
    var properties: DeviceProperties
    /// Its identifier, when it has an address and its adapter's address is known.
    var identifier: PeripheralIdentifier?
    /// Counts the changes of what it advertises (``DeviceProperties/advertisement``): a scan without duplicates
    /// remembers this, not the advertisement, to report each change once.
    var advertisementVersion: UInt64 = 0
    /// When the mirror last moved it to the newest end of its recency list (nil: it is not in the list).
    var recencyStamp: BLEInstant?

    /// Sets `changed` and removes `invalidated` (see ``DeviceProperties/apply(_:_:refused:)``); returns the keys
    /// whose value changed, and counts a change of the advertisement.
    ///
    /// bluetoothd sends the advertised properties again with every report of a scan with duplicates, mostly
    /// unchanged: the properties then keep the advertisement they hold, and comparing it with the one before is a
    /// comparison of references. Only a changed advertised property makes a new one, compared field by field.
    mutating func apply(_ changed: PropertyMap, _ invalidated: [String], refused: inout Int) -> [String] {
        let before = properties.advertisement
        let keys = properties.apply(changed, invalidated, refused: &refused)
        if properties.advertisement != before { advertisementVersion &+= 1 }
        return keys
    }

    /// Applies a signal about the device, heard at `now` (see ``apply(_:_:refused:)``); returns the changed keys
    /// and whether the device is due a move to the newest end of the mirror's recency list: it is subject to expiry
    /// and was not moved within `resolution` (the move is then stamped here).
    mutating func heard(
        _ changed: PropertyMap, _ invalidated: [String], at now: BLEInstant, resolution: Duration, refused: inout Int
    ) -> (keys: [String], renew: Bool) {
        let keys = apply(changed, invalidated, refused: &refused)
        guard prunable, recencyStamp.map({ now - $0 >= resolution }) ?? true else { return (keys, false) }
        recencyStamp = now
        return (keys, true)
    }

    /// Whether a change of the property `key` moves the device in the indices by adapter and link, or in or out
    /// of the recency list.
    static func changesIndices(_ key: String) -> Bool {
        key == "Adapter" || key == "Connected" || key == "Paired"
    }

    /// Neither connected nor paired: subject to expiry.
    var prunable: Bool { !properties.isConnected && !properties.isPaired }

    /// The typed view of the device at `path`, when it is complete (it has an Address).
    func model(at path: String) -> DeviceModel? {
        properties.model(path: path, adapterPath: adapter)
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
        case BlueZInterface.device:
            deviceAdded(path, DeviceProperties(properties, refused: &counters.oversizedValues), now: now)
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

    /// Properties `keys` of `interface` (not Device1: ``deviceChanged(_:keys:now:)``)
    /// at `path` changed, to `properties`.
    mutating func indexChanged(
        _ path: String, _ interface: String, _ properties: PropertyMap, keys: [String], now: BLEInstant
    ) {
        switch interface {
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

    /// Device1 appeared at `path` with `properties`: its entry, the indices by adapter and link, recency, identifier.
    private mutating func deviceAdded(_ path: String, _ properties: DeviceProperties, now: BLEInstant) {
        forgetDevice(path)
        let adapter = properties.adapterPath ?? ObjectTreeIndex.parent(of: path) ?? "/"
        let entry = DeviceEntry(adapter: adapter, properties: properties)
        index.devicesByAdapter[adapter, default: []].insert(path)
        if properties.isConnected { index.connectedDevices.insert(path) }
        index.devices[path] = entry
        if entry.prunable { touchRecency(path, at: now) }
        refreshIdentifier(path)
    }

    /// The device at `path` was heard and its Device1 properties `keys`
    /// changed (none: heard all the same): recency, identifier and, when its
    /// adapter, link or pairing changed, the indices by those. A live report
    /// takes ``deviceHeard(_:keys:renew:now:)`` instead, with the entry already stamped.
    mutating func deviceChanged(_ path: String, keys: [String], now: BLEInstant) {
        if !keys.contains(where: DeviceEntry.changesIndices) {
            guard let prunable = index.devices[path]?.prunable else { return }
            if prunable { index.devices[path]?.recencyStamp = now }
            deviceHeard(path, keys: keys, renew: prunable, now: now)
            return
        }
        guard let entry = index.devices[path] else { return }
        let adapter = entry.properties.adapterPath ?? ObjectTreeIndex.parent(of: path) ?? "/"
        if entry.adapter != adapter {
            index.devicesByAdapter[entry.adapter]?.remove(path)
            if index.devicesByAdapter[entry.adapter]?.isEmpty == true { index.devicesByAdapter[entry.adapter] = nil }
            index.devicesByAdapter[adapter, default: []].insert(path)
            index.devices[path]?.adapter = adapter
        }
        if entry.properties.isConnected {
            index.connectedDevices.insert(path)
        } else {
            index.connectedDevices.remove(path)
        }
        if entry.prunable {
            touchRecency(path, at: now)
        } else {
            recency.remove(path)
            index.devices[path]?.recencyStamp = nil
        }
        refreshIdentifier(path)
    }

    /// A signal about the device at `path` changed `keys` (none of them ``DeviceEntry/changesIndices(_:)``) and,
    /// when `renew`, is due a move in the recency list (``DeviceEntry/heard(_:_:at:resolution:refused:)`` stamped it).
    mutating func deviceHeard(_ path: String, keys: [String], renew: Bool, now: BLEInstant) {
        if renew { recency.touch(path, at: now) }
        if keys.contains(where: { $0 == "Address" || $0 == "AddressType" }) { refreshIdentifier(path) }
    }

    /// Moves the device at `path` to the newest end of the recency list and stamps its entry.
    private mutating func touchRecency(_ path: String, at now: BLEInstant) {
        recency.touch(path, at: now)
        index.devices[path]?.recencyStamp = now
    }

    private mutating func forgetDevice(_ path: String) {
        guard let entry = index.devices.removeValue(forKey: path) else { return }
        index.connectedDevices.remove(path)
        index.devicesByAdapter[entry.adapter]?.remove(path)
        if index.devicesByAdapter[entry.adapter]?.isEmpty == true { index.devicesByAdapter[entry.adapter] = nil }
        if let identifier = entry.identifier, index.paths[identifier] == path { index.paths[identifier] = nil }
        recency.remove(path)
    }

    /// The backend's adapters, all of them (as a snapshot lists them): their addresses name their devices.
    public mutating func setAdapters(_ adapters: [AdapterStatus]) {
        var addresses: [String: String] = [:]
        for adapter in adapters { addresses[adapter.id] = adapter.address }
        let previous = index.adapterAddresses
        index.adapterAddresses = addresses
        for id in Set(previous.keys).union(addresses.keys) where previous[id] != addresses[id] {
            refreshIdentifiers(ofAdapter: id)
        }
    }

    /// An adapter appeared or changed: its address names its devices.
    public mutating func updateAdapter(_ adapter: AdapterStatus) {
        guard index.adapterAddresses[adapter.id] != adapter.address else { return }
        index.adapterAddresses[adapter.id] = adapter.address
        refreshIdentifiers(ofAdapter: adapter.id)
    }

    /// The adapter `id` went away: its devices have no identifier until it returns.
    public mutating func removeAdapter(id: String) {
        guard index.adapterAddresses.removeValue(forKey: id) != nil else { return }
        refreshIdentifiers(ofAdapter: id)
    }

    /// The address of the adapter `id` (an ``AdapterStatus/id``), when known.
    public func adapterAddress(of id: String) -> String? {
        index.adapterAddresses[id]
    }

    private mutating func refreshIdentifiers(ofAdapter adapter: String) {
        for path in index.devicesByAdapter[adapter] ?? [] { refreshIdentifier(path) }
    }

    /// Recomputes the identifier of the device at `path` (its adapter's address, its address and type).
    private mutating func refreshIdentifier(_ path: String) {
        guard let entry = index.devices[path] else { return }
        var identifier: PeripheralIdentifier?
        if let model = entry.model(at: path), let adapterAddress = index.adapterAddresses[model.adapterPath] {
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
