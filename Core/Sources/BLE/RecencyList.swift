/// Keys in the order they were last touched, oldest first: a ``RecencyTable``
/// whose keys carry no value.
public typealias RecencyList<Key: Hashable & Sendable> = RecencyTable<Key, Void>

/// Keys, each with a value, in the order they were last touched, oldest
/// first: a doubly linked list threaded through an array of nodes that hold
/// the keys and values, with one dictionary from key to node, so touching,
/// removing, reading a value and taking the oldest key cost O(1) (one hash
/// of the key) whatever the number of keys.
///
/// The device tables use it for expiry and capacity: touch a key when its
/// device is heard, and drop keys from the oldest end while they are older
/// than the expiry or beyond the capacity, without looking at the others; a
/// table that keeps something per device keeps it in the node, with no
/// dictionary of its own. Instants passed to ``touch(_:_:at:)`` are expected
/// not to decrease (a monotonic clock); an earlier one is raised to the newest
/// key's, so the order and the instants always agree. Inlinable, so other
/// modules' device tables get code specialised for their key.
public struct RecencyTable<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    @usableFromInline struct Node: Sendable {
        @usableFromInline var entry: (key: Key, value: Value)?
        @usableFromInline var older: Int32 = -1
        @usableFromInline var newer: Int32 = -1
        @usableFromInline var touched: BLEInstant

        @inlinable init(entry: (key: Key, value: Value)?, touched: BLEInstant) {
            self.entry = entry
            self.touched = touched
        }
    }

    @usableFromInline var slots: [Key: Int32] = [:]
    @usableFromInline var nodes: [Node] = []
    @usableFromInline var freeSlots: [Int32] = []
    @usableFromInline var oldestSlot: Int32 = -1
    @usableFromInline var newestSlot: Int32 = -1

    /// An empty table.
    @inlinable public init() {}

    /// How many keys the table holds.
    @inlinable public var count: Int { slots.count }

    /// Whether the table is empty.
    @inlinable public var isEmpty: Bool { slots.isEmpty }

    /// Whether `key` is in the table.
    @inlinable public func contains(_ key: Key) -> Bool { slots[key] != nil }

    /// The value of `key`, if it is in the table.
    @inlinable public subscript(key: Key) -> Value? {
        slots[key].flatMap { nodes[Int($0)].entry?.value }
    }

    /// When `key` was last touched, if it is in the table.
    @inlinable public func lastTouched(_ key: Key) -> BLEInstant? { slots[key].map { nodes[Int($0)].touched } }

    /// The least recently touched key and when, if any.
    @inlinable public var oldest: (key: Key, touched: BLEInstant)? {
        guard oldestSlot >= 0, let key = nodes[Int(oldestSlot)].entry?.key else { return nil }
        return (key, nodes[Int(oldestSlot)].touched)
    }

    /// Every key with its value, oldest first.
    @inlinable public var entries: [(key: Key, value: Value)] {
        var entries: [(key: Key, value: Value)] = []
        entries.reserveCapacity(count)
        var slot = oldestSlot
        while slot >= 0 {
            if let entry = nodes[Int(slot)].entry { entries.append(entry) }
            slot = nodes[Int(slot)].newer
        }
        return entries
    }

    /// The keys last touched `age` or longer before `now`, oldest first.
    @inlinable public func keys(untouchedFor age: Duration, at now: BLEInstant) -> [Key] {
        var keys: [Key] = []
        var slot = oldestSlot
        while slot >= 0, now - nodes[Int(slot)].touched >= age {
            if let key = nodes[Int(slot)].entry?.key { keys.append(key) }
            slot = nodes[Int(slot)].newer
        }
        return keys
    }

    /// Sets the value of `key` and makes it the most recently touched, at `now` (inserting it if new).
    @inlinable public mutating func touch(_ key: Key, _ value: Value, at now: BLEInstant) {
        if let slot = slots[key] {
            nodes[Int(slot)].entry = (key, value)
            moveToNewest(slot, at: now)
            return
        }
        let instant = newestSlot >= 0 ? max(now, nodes[Int(newestSlot)].touched) : now
        let slot: Int32
        if let reused = freeSlots.popLast() {
            slot = reused
            nodes[Int(slot)] = Node(entry: (key, value), touched: instant)
        } else {
            slot = Int32(nodes.count)
            nodes.append(Node(entry: (key, value), touched: instant))
        }
        slots[key] = slot
        link(slot)
    }

    /// Makes `key` the most recently touched, at `now`, keeping its value; returns whether it is in the table.
    @inlinable @discardableResult
    public mutating func renew(_ key: Key, at now: BLEInstant) -> Bool {
        guard let slot = slots[key] else { return false }
        moveToNewest(slot, at: now)
        return true
    }

    /// Removes `key`; returns whether it was there.
    @inlinable @discardableResult
    public mutating func remove(_ key: Key) -> Bool {
        guard let slot = slots.removeValue(forKey: key) else { return false }
        unlink(slot)
        nodes[Int(slot)].entry = nil
        freeSlots.append(slot)
        if nodes.count > 64 && slots.count * 4 < nodes.count { compact() }
        return true
    }

    /// Removes and returns the least recently touched key.
    @inlinable public mutating func removeOldest() -> Key? {
        guard let key = oldest?.key else { return nil }
        remove(key)
        return key
    }

    /// Empties the table.
    @inlinable public mutating func removeAll() {
        self = RecencyTable()
    }

    @inlinable mutating func moveToNewest(_ slot: Int32, at now: BLEInstant) {
        let instant = newestSlot >= 0 ? max(now, nodes[Int(newestSlot)].touched) : now
        nodes[Int(slot)].touched = instant
        guard slot != newestSlot else { return }
        unlink(slot)
        link(slot)
    }

    /// Links `slot` in as the newest.
    @inlinable mutating func link(_ slot: Int32) {
        nodes[Int(slot)].older = newestSlot
        nodes[Int(slot)].newer = -1
        if newestSlot >= 0 { nodes[Int(newestSlot)].newer = slot }
        newestSlot = slot
        if oldestSlot < 0 { oldestSlot = slot }
    }

    @inlinable mutating func unlink(_ slot: Int32) {
        let (older, newer) = (nodes[Int(slot)].older, nodes[Int(slot)].newer)
        if older >= 0 { nodes[Int(older)].newer = newer } else { oldestSlot = newer }
        if newer >= 0 { nodes[Int(newer)].older = older } else { newestSlot = older }
    }

    /// Rebuilds the nodes in order once most slots are free, so memory follows the number of keys.
    @inlinable mutating func compact() {
        var rebuilt = RecencyTable()
        var slot = oldestSlot
        while slot >= 0 {
            if let entry = nodes[Int(slot)].entry {
                rebuilt.touch(entry.key, entry.value, at: nodes[Int(slot)].touched)
            }
            slot = nodes[Int(slot)].newer
        }
        self = rebuilt
    }
}

extension RecencyTable where Value == Void {
    /// Makes `key` the most recently touched, at `now` (inserting it if new).
    @inlinable public mutating func touch(_ key: Key, at now: BLEInstant) {
        touch(key, (), at: now)
    }
}
