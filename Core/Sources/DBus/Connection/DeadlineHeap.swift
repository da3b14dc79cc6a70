/// A binary min-heap of call deadlines, keyed by call id; entries of calls that already finished are skipped lazily.
struct DeadlineHeap {
    private(set) var entries: [(deadline: ContinuousClock.Instant, id: UInt64)] = []

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }
    var earliest: ContinuousClock.Instant? { entries.first?.deadline }

    mutating func insert(_ deadline: ContinuousClock.Instant, id: UInt64) {
        entries.append((deadline, id))
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].deadline < entries[parent].deadline else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest entry if its deadline is not after `now`.
    mutating func popExpired(now: ContinuousClock.Instant) -> UInt64? {
        guard let first = entries.first, first.deadline <= now else { return nil }
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var smallest = parent
                if left < entries.count, entries[left].deadline < entries[smallest].deadline { smallest = left }
                if right < entries.count, entries[right].deadline < entries[smallest].deadline { smallest = right }
                if smallest == parent { break }
                entries.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return first.id
    }

    /// Rebuilds the heap keeping only entries whose id passes `isLive` (drops stale entries of finished calls).
    mutating func compact(keeping isLive: (UInt64) -> Bool) {
        let live = entries.filter { isLive($0.id) }
        entries = []
        for entry in live { insert(entry.deadline, id: entry.id) }
    }
}
