/// The devices the gateway keeps, at most `capacity` of them, in the order
/// they were last heard.
///
/// Every operation costs O(1) (amortised hashing) except expiry, which costs
/// O(devices expired): entries sit in a doubly linked list from the most
/// recently heard to the least, so the one to evict and the ones to expire
/// are at its tail. Memory is bounded by `capacity`, never by time.
///
/// Eviction: a new device arriving at a full table replaces the least
/// recently heard one.
public struct DeviceTable: Sendable {
    /// The most devices kept.
    public let capacity: Int
    private var slots: [DeviceEntry?] = []
    private var newer: [Int] = []
    private var older: [Int] = []
    private var newest = -1
    private var oldest = -1
    private var free: [Int] = []
    private var index: [DeviceAddress: Int] = [:]

    /// An empty table for at most `capacity` (at least 1) devices.
    public init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// How many devices it holds.
    public var count: Int { index.count }

    /// The device at `address`.
    public func entry(_ address: DeviceAddress) -> DeviceEntry? {
        index[address].flatMap { slots[$0] }
    }

    /// Every device, most recently heard first.
    public var entries: [DeviceEntry] {
        var result: [DeviceEntry] = []
        result.reserveCapacity(count)
        var slot = newest
        while slot >= 0 {
            if let entry = slots[slot] { result.append(entry) }
            slot = older[slot]
        }
        return result
    }

    /// The least recently heard device.
    public var leastRecent: DeviceEntry? { oldest >= 0 ? slots[oldest] : nil }

    /// Runs `body` on the device at `address`, made by `make` if absent, and
    /// marks it most recently heard. Returns the body's result and the entry
    /// evicted to make room, if any.
    public mutating func update<R>(
        _ address: DeviceAddress, make: () -> DeviceEntry, _ body: (inout DeviceEntry) -> R
    ) -> (result: R, evicted: DeviceEntry?) {
        var evicted: DeviceEntry?
        let slot: Int
        if let existing = index[address] {
            slot = existing
            unlink(slot)
        } else {
            if index.count >= capacity, oldest >= 0 { evicted = remove(at: oldest) }
            if let reused = free.popLast() {
                slot = reused
                slots[slot] = make()
            } else {
                slot = slots.count
                slots.append(make())
                newer.append(-1)
                older.append(-1)
            }
            index[address] = slot
        }
        pushNewest(slot)
        let result = body(&slots[slot]!)
        return (result, evicted)
    }

    /// Runs `body` on the device at `address` without changing the order;
    /// nil when absent.
    public mutating func modify<R>(_ address: DeviceAddress, _ body: (inout DeviceEntry) -> R) -> R? {
        guard let slot = index[address] else { return nil }
        return body(&slots[slot]!)
    }

    /// Removes the devices last heard before `cutoff` and returns them.
    public mutating func removeHeard(before cutoff: Duration) -> [DeviceEntry] {
        var removed: [DeviceEntry] = []
        while oldest >= 0, let entry = slots[oldest], entry.lastSeen < cutoff {
            removed.append(remove(at: oldest))
        }
        return removed
    }

    private mutating func remove(at slot: Int) -> DeviceEntry {
        let entry = slots[slot]!
        unlink(slot)
        slots[slot] = nil
        free.append(slot)
        index[entry.address] = nil
        return entry
    }

    private mutating func unlink(_ slot: Int) {
        let before = newer[slot]
        let after = older[slot]
        if before >= 0 { older[before] = after } else { newest = after }
        if after >= 0 { newer[after] = before } else { oldest = before }
        newer[slot] = -1
        older[slot] = -1
    }

    private mutating func pushNewest(_ slot: Int) {
        older[slot] = newest
        newer[slot] = -1
        if newest >= 0 { newer[newest] = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
    }
}
