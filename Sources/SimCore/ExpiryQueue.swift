/// When each key is next due to be looked at: a binary min-heap with at most one live entry per key.
///
/// A key whose deadline only ever moves later (a temporary device heard again) is not moved in the
/// heap when it is renewed: its entry stays at the deadline it was scheduled for, and when that
/// entry comes due the owner is asked for the key's current deadline and the key is scheduled
/// again for it if that lies ahead. So renewing costs nothing, and each key is looked at once per
/// deadline it was given, not on every tick; ``popDue(at:deadline:)`` costs in proportion to the
/// keys that come due. Entries of keys that were ``cancel(_:)``ed are dropped when they surface.
/// Pure state: the owner says what time it is.
struct ExpiryQueue<Key: Hashable & Sendable>: Sendable {
    private struct Entry: Comparable, Sendable {
        var instant: SimInstant
        var key: Key

        static func < (lhs: Entry, rhs: Entry) -> Bool { lhs.instant < rhs.instant }
        static func == (lhs: Entry, rhs: Entry) -> Bool { lhs.instant == rhs.instant }
    }

    private var heap = MinHeap<Entry>()
    /// The instant of each key's live entry.
    private var scheduled: [Key: SimInstant] = [:]

    /// How many keys are scheduled.
    var count: Int { scheduled.count }

    /// The earliest entry's instant: a key may be due then (or it was renewed and is only looked at).
    var earliest: SimInstant? { heap.first?.instant }

    /// Makes sure `key` is looked at no later than `instant`: a key already scheduled at or before
    /// it keeps its entry (it is renewed when that entry comes due).
    mutating func schedule(_ key: Key, at instant: SimInstant) {
        if let current = scheduled[key], current <= instant { return }
        scheduled[key] = instant
        heap.push(Entry(instant: instant, key: key))
    }

    /// Forgets `key` (its entry is dropped when it surfaces).
    mutating func cancel(_ key: Key) {
        scheduled[key] = nil
    }

    /// Takes the keys whose entries are due at `now`; for each, `deadline` gives the key's current
    /// deadline (nil: it has none any more). A key whose deadline has passed is returned and no
    /// longer scheduled; one whose deadline lies ahead is scheduled again for it.
    mutating func popDue(at now: SimInstant, deadline: (Key) -> SimInstant?) -> [Key] {
        var due: [Key] = []
        while let first = heap.first, first.instant <= now {
            _ = heap.popFirst()
            guard scheduled[first.key] == first.instant else { continue }
            scheduled[first.key] = nil
            guard let current = deadline(first.key) else { continue }
            if current <= now {
                due.append(first.key)
            } else {
                schedule(first.key, at: current)
            }
        }
        return due
    }
}
