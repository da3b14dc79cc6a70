/// Keys in the order they were last touched, oldest first: a doubly linked
/// list threaded through an array of nodes, with one dictionary from key to
/// node, so touching, removing and taking the oldest key cost O(1) (one hash
/// of the key) whatever the number of keys.
///
/// The device tables use it for expiry and capacity: touch a key when its
/// device is heard, and drop keys from the oldest end while they are older
/// than the expiry or beyond the capacity, without looking at the others.
/// Instants passed to ``touch(_:at:)`` are expected not to decrease (a
/// monotonic clock); an earlier one is raised to the newest key's, so the
/// order and the instants always agree. Inlinable, so other modules' device
/// tables get code specialised for their key.
public struct RecencyList<Key: Hashable & Sendable>: Sendable {
    @usableFromInline struct Node: Sendable {
        @usableFromInline var key: Key?
        @usableFromInline var older = -1
        @usableFromInline var newer = -1
        @usableFromInline var touched: BLEInstant

        @inlinable init(key: Key?, touched: BLEInstant) {
            self.key = key
            self.touched = touched
        }
    }

    @usableFromInline var slots: [Key: Int] = [:]
    @usableFromInline var nodes: [Node] = []
    @usableFromInline var freeSlots: [Int] = []
    @usableFromInline var oldestSlot = -1
    @usableFromInline var newestSlot = -1

    /// An empty list.
    @inlinable public init() {}

    /// How many keys the list holds.
    @inlinable public var count: Int { slots.count }

    /// Whether the list is empty.
    @inlinable public var isEmpty: Bool { slots.isEmpty }

    /// Whether `key` is in the list.
    @inlinable public func contains(_ key: Key) -> Bool { slots[key] != nil }

    /// When `key` was last touched, if it is in the list.
    @inlinable public func lastTouched(_ key: Key) -> BLEInstant? { slots[key].map { nodes[$0].touched } }

    /// The least recently touched key and when, if any.
    @inlinable public var oldest: (key: Key, touched: BLEInstant)? {
        guard oldestSlot >= 0, let key = nodes[oldestSlot].key else { return nil }
        return (key, nodes[oldestSlot].touched)
    }

    /// The keys last touched `age` or longer before `now`, oldest first.
    @inlinable public func keys(untouchedFor age: Duration, at now: BLEInstant) -> [Key] {
        var keys: [Key] = []
        var slot = oldestSlot
        while slot >= 0, now - nodes[slot].touched >= age {
            if let key = nodes[slot].key { keys.append(key) }
            slot = nodes[slot].newer
        }
        return keys
    }

    /// Makes `key` the most recently touched, at `now` (inserting it if new).
    @inlinable public mutating func touch(_ key: Key, at now: BLEInstant) {
        let instant = newestSlot >= 0 ? max(now, nodes[newestSlot].touched) : now
        let slot: Int
        if let existing = slots[key] {
            slot = existing
            nodes[slot].touched = instant
            guard slot != newestSlot else { return }
            unlink(slot)
        } else {
            if let reused = freeSlots.popLast() {
                slot = reused
                nodes[slot] = Node(key: key, touched: instant)
            } else {
                slot = nodes.count
                nodes.append(Node(key: key, touched: instant))
            }
            slots[key] = slot
        }
        nodes[slot].older = newestSlot
        nodes[slot].newer = -1
        if newestSlot >= 0 { nodes[newestSlot].newer = slot }
        newestSlot = slot
        if oldestSlot < 0 { oldestSlot = slot }
    }

    /// Removes `key`; returns whether it was there.
    @inlinable @discardableResult
    public mutating func remove(_ key: Key) -> Bool {
        guard let slot = slots.removeValue(forKey: key) else { return false }
        unlink(slot)
        nodes[slot].key = nil
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

    /// Empties the list.
    @inlinable public mutating func removeAll() {
        self = RecencyList()
    }

    @inlinable mutating func unlink(_ slot: Int) {
        let (older, newer) = (nodes[slot].older, nodes[slot].newer)
        if older >= 0 { nodes[older].newer = newer } else { oldestSlot = newer }
        if newer >= 0 { nodes[newer].older = older } else { newestSlot = older }
    }

    /// Rebuilds the nodes in order once most slots are free, so memory follows the number of keys.
    @inlinable mutating func compact() {
        var rebuilt = RecencyList()
        var slot = oldestSlot
        while slot >= 0 {
            if let key = nodes[slot].key { rebuilt.touch(key, at: nodes[slot].touched) }
            slot = nodes[slot].newer
        }
        self = rebuilt
    }
}
