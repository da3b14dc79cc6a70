/// The mirror of bluetoothd's object tree as a pure reducer, in the shape of
/// Bleak's BlueZ manager: one dictionary path → interface → properties,
/// updated in place, with indices kept beside it (the children of each
/// path, the services of a device, the characteristics of a service, the
/// descriptors of a characteristic, the devices of an adapter, identifier ↔
/// path), so a signal costs in proportion to what it changes and no query
/// walks the tree. Each device is kept once: its Device1 properties, typed,
/// in its index entry (``DeviceProperties``), from which its ``DeviceModel``
/// is read when asked. Adapters are not read from the tree: the backend
/// decodes them (``AdapterStatus``) and the manager hands their addresses
/// over (``setAdapters(_:)``, ``updateAdapter(_:)``, ``removeAdapter(id:)``),
/// which name their devices' identifiers.
///
/// The shell subscribes to InterfacesAdded, InterfacesRemoved and
/// PropertiesChanged *before* calling GetManagedObjects, then feeds both here.
/// Deltas that arrive before the snapshot is applied are buffered (at most
/// ``Limits/maximumBufferedDeltas``; past that the buffer is dropped, counted
/// in ``Counters/bufferedDeltasDropped``, and ``needsSnapshot`` asks for a
/// fresh snapshot). When the shell knows the D-Bus serial of each message
/// (bluetoothd numbers its signals and replies from one counter, in order),
/// buffered deltas with a serial lower than the snapshot reply's are already
/// contained in the snapshot and are dropped, the others are applied after
/// it: nothing is lost and nothing doubled. Without serials the buffered
/// deltas are replayed on top of the snapshot; every operation is idempotent
/// and a change is only reported when a value actually differs, with one
/// exception: a characteristic's `Value` in a live PropertiesChanged
/// (received after the snapshot, or buffered with a serial newer than it) is
/// always reported. bluetoothd signals every notification and indication that
/// way, and a peer may send the same bytes twice (a re-indicated status, a
/// sensor reading that did not move): each is an event, not a state.
///
/// A snapshot that arrives while the mirror is loaded (the shell asked for it
/// with ``snapshotRequested()``) keeps, path by path, what live deltas newer
/// than its reply changed meanwhile: the reply is older than they are.
///
/// The mirror follows bluetoothd's own removals: bluetoothd keeps a
/// temporary (unconnected, unpaired) device while it hears it and removes it
/// (InterfacesRemoved) once it has not heard it for its TemporaryTimeout
/// (30 s), or when discovery stops. In a scan without duplicates a device
/// whose advertisement does not change (an RSSI that moves by less than
/// 8 dBm) is heard without any signal, so the time since its last signal
/// says nothing about whether bluetoothd still holds it. The mirror is
/// bounded all the same: ``prune(now:)`` drops the least recently signalled
/// such devices beyond ``Limits/maximumDevices`` (counted in
/// ``Counters/devicesEvicted``), and, as a backstop for a BlueZ that never
/// removes its devices or a removal that was lost, those without a signal
/// for ``Limits/staleDeviceAge`` (counted in ``Counters/devicesExpired``),
/// together with the objects below them. A device dropped while BlueZ still
/// holds it comes back with its next signal (a refresh). Pruning looks only
/// at the oldest devices (a ``RecencyList``), so it costs nothing while
/// nothing is due. Whatever BlueZ sends, the mirror holds at most
/// ``Limits/maximumObjects`` objects: connected and paired devices and GATT
/// attributes are never evicted, so past the bound a new object takes an
/// evictable device's place or is refused (``Counters/objectsRefused``), and a
/// device's Device1 values take at most ``DeviceProperties/byteBudget`` bytes.
public struct ObjectTreeMirror: Sendable {
    /// Bounds on the mirrored devices and objects and the buffered deltas.
    public struct Limits: Hashable, Sendable {
        /// Unconnected, unpaired devices without a signal for this long are
        /// dropped: a backstop, far longer than bluetoothd's TemporaryTimeout
        /// (30 s), because bluetoothd removes the devices it stops hearing
        /// itself and keeps, without signalling them, those it hears unchanged.
        public var staleDeviceAge: Duration
        /// At most this many unconnected, unpaired devices are kept.
        public var maximumDevices: Int
        /// At most this many deltas are buffered before the first snapshot.
        public var maximumBufferedDeltas: Int
        /// At most this many objects of any kind are kept (adapters, devices, their GATT services,
        /// characteristics and descriptors): a new one beyond it takes the place of the least recently
        /// signalled unconnected, unpaired device, or is refused when there is none.
        public var maximumObjects: Int

        /// Limits; by default one hour, 16,384 devices, 16,384 buffered deltas and 65,536 objects (the devices
        /// and, beside them, a whole GATT handle space's worth of attributes of the connected ones).
        public init(
            staleDeviceAge: Duration = .seconds(3600), maximumDevices: Int = 16_384,
            maximumBufferedDeltas: Int = 16_384, maximumObjects: Int = 65_536
        ) {
            self.staleDeviceAge = staleDeviceAge
            self.maximumDevices = maximumDevices
            self.maximumBufferedDeltas = maximumBufferedDeltas
            self.maximumObjects = maximumObjects
        }
    }

    /// What the mirror dropped to stay within its ``Limits``.
    public struct Counters: Hashable, Sendable {
        /// Devices dropped because they had no signal within the stale age.
        public var devicesExpired = 0
        /// Devices dropped because there were more than the maximum.
        public var devicesEvicted = 0
        /// Deltas dropped because the buffer before the snapshot was full.
        public var bufferedDeltasDropped = 0
        /// PropertiesChanged signals for objects the mirror does not hold.
        public var unknownObjectSignals = 0
        /// Device1 values refused because they would have taken their device's values past
        /// ``DeviceProperties/byteBudget`` (the property kept its value).
        public var oversizedValues = 0
        /// New objects refused because the mirror held ``Limits/maximumObjects`` and no device could make room.
        public var objectsRefused = 0
    }

    /// The Device1 properties the mirror keeps: those the BLE layer reads.
    /// The others (Bonded, Trusted, Blocked, LegacyPairing, Class, Icon,
    /// Appearance, Modalias, WakeAllowed, Sets, ...) are dropped as they
    /// arrive. The kept ones are held typed, once per device
    /// (``DeviceProperties``), and read back exactly as sent with
    /// ``properties(at:interface:)``.
    public static let mirroredDeviceProperties = Set(DeviceProperties.names)

    /// The most bytes one device's kept Device1 values take together, counted as sent (strings with their
    /// terminator, byte arrays, UUIDs as text; numbers and Booleans not counted): see ``Counters/oversizedValues``.
    public static var deviceByteBudget: Int { DeviceProperties.byteBudget }

    /// The limits.
    public let limits: Limits
    /// Every mirrored object: path, interface, properties. A device's Device1
    /// is listed here with no properties: they are kept typed, once, in its
    /// ``DeviceEntry`` (``properties(at:interface:)`` gives them back).
    private(set) var objects: ObjectTreeSnapshot = [:]
    /// Whether a snapshot has been applied since the last ``reset()``.
    public private(set) var isLoaded = false
    /// How many snapshots (GetManagedObjects replies) have been applied.
    public private(set) var snapshotsApplied = 0
    /// What was dropped to stay bounded.
    public internal(set) var counters = Counters()
    /// Deltas were lost (the buffer before the snapshot overflowed): the
    /// shell should ask for another snapshot once the pending one is applied.
    public private(set) var needsSnapshot = false
    var index = ObjectTreeIndex()
    /// Unconnected, unpaired devices by when they were last heard.
    var recency = RecencyList<String>()
    /// Interface maps whose interfaces hold no properties here, one copy per
    /// set of names, shared by every object with that set (``shareInterfaces(at:)``).
    private var sharedInterfaceMaps: [InterfaceMap] = []
    private var buffered: [(delta: ObjectTreeDelta, serial: UInt32?)] = []
    private var snapshotsPending = 0
    /// While a snapshot is pending: paths live deltas changed, with the newest serial.
    private var touchedSince: [String: UInt32] = [:]
    private var touchedOverflow = false

    /// An empty, unloaded mirror.
    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// The number of mirrored objects.
    public var objectCount: Int { objects.count }

    /// bluetoothd left the bus: forget everything and buffer again until the
    /// next snapshot. Returns the removal of every interface.
    public mutating func reset() -> [ObjectTreeChange] {
        let changes = objects.keys.sorted().flatMap { path in
            (objects[path]?.keys.sorted() ?? []).map { ObjectTreeChange.removed(path: path, interface: $0) }
        }
        objects = [:]
        sharedInterfaceMaps = []
        index = ObjectTreeIndex()
        recency.removeAll()
        buffered = []
        snapshotsPending = 0
        touchedSince = [:]
        touchedOverflow = false
        needsSnapshot = false
        isLoaded = false
        return changes
    }

    /// The shell is about to ask for a snapshot while loaded: from now until
    /// it is applied (or ``snapshotFailed()``), the paths live deltas change
    /// are remembered with their serials.
    public mutating func snapshotRequested() {
        snapshotsPending += 1
    }

    /// A requested snapshot did not come.
    public mutating func snapshotFailed() {
        snapshotsPending = max(0, snapshotsPending - 1)
        if snapshotsPending == 0 {
            touchedSince = [:]
            touchedOverflow = false
        }
    }

    /// Applies a signal. Before the first snapshot it is buffered; `serial` is
    /// the signal message's D-Bus serial when the shell knows it.
    public mutating func receive(_ delta: ObjectTreeDelta, serial: UInt32? = nil, now: BLEInstant) -> [ObjectTreeChange]
    {
        guard isLoaded else {
            if buffered.count >= max(1, limits.maximumBufferedDeltas) {
                counters.bufferedDeltasDropped += buffered.count
                buffered = []
                needsSnapshot = true
            }
            buffered.append((delta, serial))
            return []
        }
        if snapshotsPending > 0, let serial { remember(delta.path, serial: serial) }
        return apply(delta, now: now, live: true)
    }

    /// Applies a GetManagedObjects reply whose D-Bus serial is `serial` (when
    /// known), then the deltas buffered while it was on its way.
    public mutating func applySnapshot(
        _ snapshot: ObjectTreeSnapshot, serial: UInt32? = nil, now: BLEInstant
    ) -> [ObjectTreeChange] {
        var keep: Set<String> = []
        var additive = false
        if isLoaded, let serial {
            keep = Set(touchedSince.filter { $0.value > serial }.keys)
            additive = touchedOverflow
        }
        snapshotsPending = max(0, snapshotsPending - 1)
        if snapshotsPending == 0 {
            touchedSince = [:]
            touchedOverflow = false
        }
        var changes: [ObjectTreeChange] = []
        for path in Set(objects.keys).union(snapshot.keys).sorted() where !keep.contains(path) {
            guard let incoming = snapshot[path] else {
                if !additive, let present = objects[path]?.keys.sorted() {
                    changes += apply(.interfacesRemoved(path: path, interfaces: present), now: now, live: false)
                }
                continue
            }
            if !additive, let present = objects[path] {
                let gone = present.keys.filter { incoming[$0] == nil }.sorted()
                if !gone.isEmpty {
                    changes += apply(.interfacesRemoved(path: path, interfaces: gone), now: now, live: false)
                }
            }
            changes += replace(path, with: incoming, additive: additive, now: now)
        }
        snapshotsApplied += 1
        let pending = buffered
        buffered = []
        isLoaded = true
        for (delta, deltaSerial) in pending {
            if let serial, let deltaSerial, deltaSerial < serial { continue }
            // Newer than the snapshot by serial: live. Without serials it may be in the snapshot already.
            changes += apply(delta, now: now, live: serial != nil && deltaSerial != nil)
        }
        return changes
    }

    /// The shell is asking for the snapshot that ``needsSnapshot`` called for.
    public mutating func snapshotScheduled() {
        needsSnapshot = false
        snapshotRequested()
    }

    /// Drops devices beyond the maximum and those past the backstop age (see ``Limits``);
    /// returns their removal. Costs nothing while nothing is due.
    public mutating func prune(now: BLEInstant) -> [ObjectTreeChange] {
        var drop: [String] = []
        while let (path, heard) = recency.oldest, now - heard >= limits.staleDeviceAge {
            recency.remove(path)
            drop.append(path)
            counters.devicesExpired += 1
        }
        while recency.count > max(0, limits.maximumDevices), let path = recency.removeOldest() {
            drop.append(path)
            counters.devicesEvicted += 1
        }
        return drop.flatMap { removeSubtree(of: $0) }
    }

    /// When ``prune(now:)`` could next drop a device, if any is droppable.
    public func nextPruneTime() -> BLEInstant? {
        recency.oldest.map { $0.touched + limits.staleDeviceAge }
    }

    /// How finely the recency list orders the devices heard: a device heard again within this long of its last
    /// move stays where it is, so a flood of reports from the same devices does not reorder the list per report.
    /// A hundredth of the stale age, at most a second: a device expires at most that much early, and the
    /// devices evicted beyond the maximum are the least recently heard to within it.
    var recencyResolution: Duration { min(.seconds(1), limits.staleDeviceAge / 100) }

    /// How many devices are candidates for pruning (neither connected nor paired).
    public var prunableDeviceCount: Int { recency.count }

    private mutating func remember(_ path: String, serial: UInt32) {
        if touchedSince[path] == nil && touchedSince.count >= 4 * max(1024, limits.maximumDevices) {
            touchedOverflow = true
            return
        }
        touchedSince[path] = max(touchedSince[path] ?? 0, serial)
    }

    /// Sets `path` to the snapshot's interfaces (without removing others): each
    /// interface added or its properties replaced, changes reported per key.
    private mutating func replace(
        _ path: String, with interfaces: InterfaceMap, additive: Bool, now: BLEInstant
    ) -> [ObjectTreeChange] {
        var changes: [ObjectTreeChange] = []
        for interface in interfaces.keys.sorted() {
            guard let properties = interfaces[interface] else { continue }
            guard let present = objects[path]?[interface] else {
                changes += apply(
                    .interfacesAdded(path: path, interfaces: [interface: properties]), now: now, live: false)
                continue
            }
            if additive { continue }
            let presentKeys =
                interface == BlueZInterface.device ? index.devices[path]?.properties.keys ?? [] : Array(present.keys)
            let invalidated = presentKeys.filter { properties[$0] == nil }
            changes += apply(
                .propertiesChanged(path: path, interface: interface, changed: properties, invalidated: invalidated),
                now: now, live: false)
        }
        return changes
    }

    private mutating func apply(_ delta: ObjectTreeDelta, now: BLEInstant, live: Bool) -> [ObjectTreeChange] {
        switch delta {
        case .interfacesAdded(let path, let interfaces):
            return add(path, interfaces, now: now)
        case .interfacesRemoved(let path, let interfaces):
            return remove(path, interfaces.sorted())
        case .propertiesChanged(let path, BlueZInterface.device, let changed, let invalidated):
            // One access to the device's entry: properties updated in place, the changed keys back, and whether
            // it is due a move in the recency list.
            let resolution = recencyResolution
            // Through the entry's index: the entry is updated where it lies, not moved out and back.
            let heard = index.devices.index(forKey: path).map {
                index.devices.values[$0].heard(
                    changed, invalidated, at: now, resolution: resolution, refused: &counters.oversizedValues)
            }
            guard let (keys, renew) = heard else {
                counters.unknownObjectSignals += 1
                return [.needsRefresh(path: path, interface: BlueZInterface.device)]
            }
            if keys.contains(where: DeviceEntry.changesIndices) {
                deviceChanged(path, keys: keys, now: now)
            } else {
                deviceHeard(path, keys: keys, renew: renew, now: now)
            }
            guard !keys.isEmpty else { return [] }
            return [.changed(path: path, interface: BlueZInterface.device, keys: keys.sorted())]
        case .propertiesChanged(let path, let interface, let changed, let invalidated):
            // One access to the object's properties: updated in place, the changed keys and the result back.
            guard let (changedKeys, properties) = objects[path]?[interface]?.apply(changed, invalidated) else {
                counters.unknownObjectSignals += 1
                return [.needsRefresh(path: path, interface: interface)]
            }
            var keys = changedKeys
            if live && interface == BlueZInterface.gattCharacteristic && changed["Value"] != nil
                && !keys.contains("Value")
            {
                keys.append("Value")
            }
            indexChanged(path, interface, properties, keys: keys, now: now)
            guard !keys.isEmpty else { return [] }
            return [.changed(path: path, interface: interface, keys: keys.sorted())]
        }
    }

    private mutating func add(_ path: String, _ interfaces: InterfaceMap, now: BLEInstant) -> [ObjectTreeChange] {
        var changes: [ObjectTreeChange] = []
        if objects[path] == nil && !interfaces.isEmpty {
            // At the bound, the least recently signalled prunable devices make room; without one, it is refused.
            while objects.count >= max(1, limits.maximumObjects) {
                guard let oldest = recency.removeOldest() else {
                    counters.objectsRefused += 1
                    return changes
                }
                counters.devicesEvicted += 1
                changes += removeSubtree(of: oldest)
            }
            objects[path] = [:]
            index.link(path, in: objects)
        }
        for interface in interfaces.keys.sorted() {
            guard let properties = interfaces[interface] else { continue }
            if interface == BlueZInterface.device,
                let keys = index.devices[path]?.apply(properties, [], refused: &counters.oversizedValues)
            {
                deviceChanged(path, keys: keys, now: now)
                if !keys.isEmpty { changes.append(.changed(path: path, interface: interface, keys: keys.sorted())) }
                continue
            }
            guard let (keys, merged) = objects[path]?[interface]?.apply(properties, []) else {
                objects[path]?[interface] = interface == BlueZInterface.device ? [:] : properties
                indexAdded(path, interface, properties, now: now)
                changes.append(.added(path: path, interface: interface))
                continue
            }
            indexChanged(path, interface, merged, keys: keys, now: now)
            if !keys.isEmpty { changes.append(.changed(path: path, interface: interface, keys: keys.sorted())) }
        }
        shareInterfaces(at: path)
        return changes
    }

    /// Lets the object at `path` share its interface map when none of its
    /// interfaces holds properties here: a device's Device1 is kept in the
    /// index, and bluetoothd lists Introspectable and Properties with none, so
    /// every device would otherwise hold its own copy of the same three names.
    /// At most 8 such maps are kept; a change to one object's map copies it
    /// for that object only.
    private mutating func shareInterfaces(at path: String) {
        guard let interfaces = objects[path], !interfaces.isEmpty, interfaces.values.allSatisfy(\.isEmpty) else {
            return
        }
        if let shared = sharedInterfaceMaps.first(where: { $0 == interfaces }) {
            objects[path] = shared
        } else if sharedInterfaceMaps.count < 8 {
            sharedInterfaceMaps.append(interfaces)
        }
    }

    private mutating func remove(_ path: String, _ interfaces: [String]) -> [ObjectTreeChange] {
        var changes: [ObjectTreeChange] = []
        for interface in interfaces where objects[path]?.removeValue(forKey: interface) != nil {
            indexRemoved(path, interface)
            changes.append(.removed(path: path, interface: interface))
        }
        if objects[path]?.isEmpty == true {
            objects[path] = nil
            index.unlink(path, in: objects)
        } else if !changes.isEmpty {
            shareInterfaces(at: path)
        }
        return changes
    }

    /// Removes a device and every object below it; the removals in path order.
    private mutating func removeSubtree(of path: String) -> [ObjectTreeChange] {
        index.subtree(of: path).sorted().flatMap { member in
            remove(member, objects[member]?.keys.sorted() ?? [])
        }
    }
}

extension PropertyMap {
    /// Sets `changed` and removes `invalidated`; returns the keys whose
    /// value differs afterwards (in the order met) and the result.
    mutating func apply(_ changed: PropertyMap, _ invalidated: [String]) -> ([String], PropertyMap) {
        var keys: [String] = []
        for (key, value) in changed where updateValue(value, forKey: key) != value { keys.append(key) }
        for key in invalidated where removeValue(forKey: key) != nil { keys.append(key) }
        return (keys, self)
    }
}
