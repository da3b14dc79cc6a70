/// The mirror of bluetoothd's object tree as a pure reducer.
///
/// The shell subscribes to InterfacesAdded, InterfacesRemoved and
/// PropertiesChanged *before* calling GetManagedObjects, then feeds both here.
/// Deltas that arrive before the snapshot is applied are buffered. When the
/// shell knows the D-Bus serial of each message (bluetoothd numbers its
/// signals and replies from one counter, in order), buffered deltas with a
/// serial lower than the snapshot reply's are already contained in the
/// snapshot and are dropped, the others are applied after it: nothing is lost
/// and nothing doubled. Without serials the buffered deltas are replayed on
/// top of the snapshot; every operation is idempotent and a change is only
/// reported when a value actually differs, with one exception: a
/// characteristic's `Value` in a live PropertiesChanged (received after the
/// snapshot, or buffered with a serial newer than it) is always reported.
/// bluetoothd signals every notification and indication that way, and a
/// peer may send the same bytes twice (a re-indicated status, a sensor
/// reading that did not move): each is an event, not a state.
///
/// The mirror is bounded: ``prune(now:)`` drops devices that are neither
/// connected nor paired and have not been heard from within
/// ``Limits/staleDeviceAge``, and the oldest such devices beyond
/// ``Limits/maximumDevices``, together with the objects below them.
public struct ObjectTreeMirror: Sendable {
    /// Bounds on the mirrored devices.
    public struct Limits: Hashable, Sendable {
        /// Unconnected, unpaired devices not heard from for this long are dropped.
        public var staleDeviceAge: Duration
        /// At most this many unconnected, unpaired devices are kept.
        public var maximumDevices: Int

        /// Limits; by default 3 minutes and 1000 devices.
        public init(staleDeviceAge: Duration = .seconds(180), maximumDevices: Int = 1000) {
            self.staleDeviceAge = staleDeviceAge
            self.maximumDevices = maximumDevices
        }
    }

    /// The limits.
    public let limits: Limits
    /// Every mirrored object: path, interface, properties.
    public private(set) var objects: ObjectTreeSnapshot = [:]
    /// Whether a snapshot has been applied since the last ``reset()``.
    public private(set) var isLoaded = false
    /// How many snapshots (GetManagedObjects replies) have been applied.
    public private(set) var snapshotsApplied = 0
    private var buffered: [(delta: ObjectTreeDelta, serial: UInt32?)] = []
    private var lastHeard: [String: BLEInstant] = [:]

    /// An empty, unloaded mirror.
    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// bluetoothd left the bus: forget everything and buffer again until the
    /// next snapshot. Returns the removal of every interface.
    public mutating func reset() -> [ObjectTreeChange] {
        let changes = diff(from: objects, to: [:])
        objects = [:]
        lastHeard = [:]
        buffered = []
        isLoaded = false
        return changes
    }

    /// Applies a signal. Before the first snapshot it is buffered; `serial` is
    /// the signal message's D-Bus serial when the shell knows it.
    public mutating func receive(_ delta: ObjectTreeDelta, serial: UInt32? = nil, now: BLEInstant) -> [ObjectTreeChange]
    {
        guard isLoaded else {
            buffered.append((delta, serial))
            return []
        }
        return apply(delta, now: now, live: true)
    }

    /// Applies a GetManagedObjects reply whose D-Bus serial is `serial` (when
    /// known), then the deltas buffered while it was on its way.
    public mutating func applySnapshot(
        _ snapshot: ObjectTreeSnapshot, serial: UInt32? = nil, now: BLEInstant
    ) -> [ObjectTreeChange] {
        var changes = diff(from: objects, to: snapshot)
        objects = snapshot
        snapshotsApplied += 1
        for (path, interfaces) in snapshot where interfaces[BlueZInterface.device] != nil { lastHeard[path] = now }
        lastHeard = lastHeard.filter { objects[$0.key] != nil }
        isLoaded = true
        let pending = buffered
        buffered = []
        for (delta, deltaSerial) in pending {
            if let serial, let deltaSerial, deltaSerial < serial { continue }
            // Newer than the snapshot by serial: live. Without serials it may be in the snapshot already.
            changes += apply(delta, now: now, live: serial != nil && deltaSerial != nil)
        }
        return changes
    }

    /// Drops stale devices (see ``Limits``); returns their removal.
    public mutating func prune(now: BLEInstant) -> [ObjectTreeChange] {
        let candidates = objects.compactMap { path, interfaces -> (String, BLEInstant)? in
            guard let device = interfaces[BlueZInterface.device] else { return nil }
            if device["Connected"]?.boolValue == true || device["Paired"]?.boolValue == true { return nil }
            return (path, lastHeard[path] ?? .zero)
        }.sorted { $0.1 == $1.1 ? $0.0 < $1.0 : $0.1 < $1.1 }
        var drop = Set(candidates.filter { now - $0.1 >= limits.staleDeviceAge }.map(\.0))
        let excess = candidates.count - max(0, limits.maximumDevices)
        if excess > 0 { drop.formUnion(candidates.prefix(excess).map(\.0)) }
        guard !drop.isEmpty else { return [] }
        var next = objects
        for path in objects.keys where drop.contains(path) || drop.contains(where: { path.hasPrefix($0 + "/") }) {
            next[path] = nil
            lastHeard[path] = nil
        }
        let changes = diff(from: objects, to: next)
        objects = next
        return changes
    }

    /// When ``prune(now:)`` could next drop a device, if any is droppable.
    public func nextPruneTime() -> BLEInstant? {
        objects.compactMap { path, interfaces -> BLEInstant? in
            guard let device = interfaces[BlueZInterface.device], device["Connected"]?.boolValue != true,
                device["Paired"]?.boolValue != true
            else { return nil }
            return (lastHeard[path] ?? .zero) + limits.staleDeviceAge
        }.min()
    }

    private mutating func apply(_ delta: ObjectTreeDelta, now: BLEInstant, live: Bool) -> [ObjectTreeChange] {
        var next = objects
        switch delta {
        case .interfacesAdded(let path, let interfaces):
            for (interface, properties) in interfaces {
                next[path, default: [:]][interface, default: [:]].merge(properties) { $1 }
            }
            if interfaces[BlueZInterface.device] != nil { lastHeard[path] = now }
        case .interfacesRemoved(let path, let interfaces):
            for interface in interfaces { next[path]?[interface] = nil }
            if next[path]?.isEmpty == true { next[path] = nil }
            if next[path]?[BlueZInterface.device] == nil { lastHeard[path] = nil }
        case .propertiesChanged(let path, let interface, let changed, let invalidated):
            guard next[path]?[interface] != nil else {
                return [.needsRefresh(path: path, interface: interface)]
            }
            next[path]?[interface]?.merge(changed) { $1 }
            for key in invalidated { next[path]?[interface]?[key] = nil }
            if interface == BlueZInterface.device { lastHeard[path] = now }
        }
        var changes = diff(from: objects, to: next)
        objects = next
        if live, case .propertiesChanged(let path, BlueZInterface.gattCharacteristic, let changed, _) = delta,
            changed["Value"] != nil,
            !changes.contains(where: {
                if case .changed(path, BlueZInterface.gattCharacteristic, let keys) = $0 {
                    keys.contains("Value")
                } else {
                    false
                }
            })
        {
            if let index = changes.firstIndex(where: {
                if case .changed(path, BlueZInterface.gattCharacteristic, _) = $0 { true } else { false }
            }), case .changed(_, _, let keys) = changes[index] {
                changes[index] = .changed(
                    path: path, interface: BlueZInterface.gattCharacteristic, keys: (keys + ["Value"]).sorted())
            } else {
                changes.append(.changed(path: path, interface: BlueZInterface.gattCharacteristic, keys: ["Value"]))
            }
        }
        return changes
    }

    private func diff(from old: ObjectTreeSnapshot, to new: ObjectTreeSnapshot) -> [ObjectTreeChange] {
        var changes: [ObjectTreeChange] = []
        for path in Set(old.keys).union(new.keys).sorted() {
            let before = old[path] ?? [:]
            let after = new[path] ?? [:]
            for interface in Set(before.keys).union(after.keys).sorted() {
                switch (before[interface], after[interface]) {
                case (nil, .some): changes.append(.added(path: path, interface: interface))
                case (.some, nil): changes.append(.removed(path: path, interface: interface))
                case (.some(let a), .some(let b)) where a != b:
                    let keys = Set(a.keys).union(b.keys).filter { a[$0] != b[$0] }.sorted()
                    changes.append(.changed(path: path, interface: interface, keys: keys))
                default: break
                }
            }
        }
        return changes
    }
}
