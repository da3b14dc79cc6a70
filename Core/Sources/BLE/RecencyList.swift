/// Keys in the order they were last touched, oldest first: a doubly linked
/// list threaded through a dictionary, so touching, removing and taking the
/// oldest key cost O(1) whatever the number of keys.
///
/// The device tables use it for expiry and capacity: touch a key when its
/// device is heard, and drop keys from the oldest end while they are older
/// than the expiry or beyond the capacity, without looking at the others.
/// Instants passed to ``touch(_:at:)`` are expected not to decrease (a
/// monotonic clock); an earlier one is raised to the newest key's, so the
/// order and the instants always agree.
public struct RecencyList<Key: Hashable & Sendable>: Sendable {
    private struct Node: Sendable {
        var older: Key?
        var newer: Key?
        var touched: BLEInstant
    }

    private var nodes: [Key: Node] = [:]
    private var oldestKey: Key?
    private var newestKey: Key?

    /// An empty list.
    public init() {}

    /// How many keys the list holds.
    public var count: Int { nodes.count }

    /// Whether the list is empty.
    public var isEmpty: Bool { nodes.isEmpty }

    /// Whether `key` is in the list.
    public func contains(_ key: Key) -> Bool { nodes[key] != nil }

    /// When `key` was last touched, if it is in the list.
    public func lastTouched(_ key: Key) -> BLEInstant? { nodes[key]?.touched }

    /// The least recently touched key and when, if any.
    public var oldest: (key: Key, touched: BLEInstant)? {
        guard let key = oldestKey, let node = nodes[key] else { return nil }
        return (key, node.touched)
    }

    /// Makes `key` the most recently touched, at `now` (inserting it if new).
    public mutating func touch(_ key: Key, at now: BLEInstant) {
        var instant = now
        if let newest = newestKey, let newestTime = nodes[newest]?.touched, newestTime > instant {
            instant = newestTime
        }
        if newestKey == key {
            nodes[key]?.touched = instant
            return
        }
        remove(key)
        nodes[key] = Node(older: newestKey, newer: nil, touched: instant)
        if let newest = newestKey { nodes[newest]?.newer = key }
        newestKey = key
        if oldestKey == nil { oldestKey = key }
    }

    /// Removes `key`; returns whether it was there.
    @discardableResult
    public mutating func remove(_ key: Key) -> Bool {
        guard let node = nodes.removeValue(forKey: key) else { return false }
        if let older = node.older { nodes[older]?.newer = node.newer } else { oldestKey = node.newer }
        if let newer = node.newer { nodes[newer]?.older = node.older } else { newestKey = node.older }
        return true
    }

    /// Removes and returns the least recently touched key.
    public mutating func removeOldest() -> Key? {
        guard let key = oldestKey else { return nil }
        remove(key)
        return key
    }

    /// Empties the list.
    public mutating func removeAll() {
        nodes = [:]
        oldestKey = nil
        newestKey = nil
    }
}
