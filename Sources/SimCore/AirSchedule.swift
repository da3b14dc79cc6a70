/// When each virtual device advertises next: a min-heap of advertising events.
///
/// A device advertises every `interval` plus a random advDelay of 0 to 10 ms (Core spec Vol 6
/// Part B 4.4.2.2.1), starting at a random offset within its first interval. Events that fall
/// more than `backlogLimit` behind the present (while nobody listened, or the shell stalled)
/// are skipped, not replayed.
public struct AirSchedule: Sendable {
    private struct Entry: Comparable, Sendable {
        var time: Int64
        var device: Int

        /// Earlier first (only the time counts, as the order of equal times needs no tie-break).
        static func < (lhs: Entry, rhs: Entry) -> Bool { lhs.time < rhs.time }
        static func == (lhs: Entry, rhs: Entry) -> Bool { lhs.time == rhs.time }
    }

    private var heap = MinHeap<Entry>()
    private var intervals: [Int64]
    private var generator: SeededGenerator

    /// How far behind the present events are still delivered, nanoseconds (1 s).
    public static let backlogLimit: Int64 = 1_000_000_000

    /// Largest advDelay, nanoseconds.
    public static let maximumAdvertisingDelay: Int64 = 10_000_000

    /// A schedule for devices advertising every `intervalsMilliseconds[i]` ms from `start`.
    public init(intervalsMilliseconds: [Double], start: SimInstant, seed: UInt64) {
        generator = SeededGenerator(seed: seed)
        intervals = intervalsMilliseconds.map { max(1_000_000, Int64(($0 * 1e6).rounded())) }
        heap.reserveCapacity(intervals.count)
        for (device, interval) in intervals.enumerated() {
            heap.push(
                Entry(time: start.nanoseconds + Int64.random(in: 0..<interval, using: &generator), device: device))
        }
    }

    /// Adds a device (index `intervals.count`) advertising every `intervalMilliseconds` from `now`.
    public mutating func append(intervalMilliseconds: Double, now: SimInstant) {
        let interval = max(1_000_000, Int64((intervalMilliseconds * 1e6).rounded()))
        intervals.append(interval)
        heap.push(
            Entry(
                time: now.nanoseconds + Int64.random(in: 0..<interval, using: &generator), device: intervals.count - 1))
    }

    /// When the next advertising event happens, if any device advertises.
    public var nextEvent: SimInstant? { heap.first.map { SimInstant(nanoseconds: $0.time) } }

    /// Every advertising event up to and including `now`, in time order, as (device index, time).
    public mutating func events(through now: SimInstant) -> [(device: Int, time: SimInstant)] {
        var due: [(device: Int, time: SimInstant)] = []
        while let top = heap.first, top.time <= now.nanoseconds, var entry = heap.popFirst() {
            let interval = intervals[entry.device]
            let oldest = now.nanoseconds - Self.backlogLimit
            if entry.time < oldest {
                entry.time += ((oldest - entry.time) / interval + 1) * interval
            }
            due.append((entry.device, SimInstant(nanoseconds: entry.time)))
            entry.time += interval + Int64.random(in: 0...Self.maximumAdvertisingDelay, using: &generator)
            heap.push(entry)
        }
        return due
    }
}
