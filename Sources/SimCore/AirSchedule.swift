/// When each virtual device advertises next: a min-heap of advertising events.
///
/// A device advertises every `interval` plus a random advDelay of 0 to 10 ms (Core spec Vol 6
/// Part B 4.4.2.2.1), starting at a random offset within its first interval. Events that fall
/// more than `backlogLimit` behind the present (while nobody listened, or the shell stalled)
/// are skipped, not replayed.
public struct AirSchedule: Sendable {
    private struct Entry: Sendable {
        var time: Int64
        var device: Int
    }

    private var heap: [Entry] = []
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
            push(Entry(time: start.nanoseconds + Int64.random(in: 0..<interval, using: &generator), device: device))
        }
    }

    /// Adds a device (index `intervals.count`) advertising every `intervalMilliseconds` from `now`.
    public mutating func append(intervalMilliseconds: Double, now: SimInstant) {
        let interval = max(1_000_000, Int64((intervalMilliseconds * 1e6).rounded()))
        intervals.append(interval)
        push(
            Entry(
                time: now.nanoseconds + Int64.random(in: 0..<interval, using: &generator), device: intervals.count - 1))
    }

    /// When the next advertising event happens, if any device advertises.
    public var nextEvent: SimInstant? { heap.first.map { SimInstant(nanoseconds: $0.time) } }

    /// Every advertising event up to and including `now`, in time order, as (device index, time).
    public mutating func events(through now: SimInstant) -> [(device: Int, time: SimInstant)] {
        var due: [(device: Int, time: SimInstant)] = []
        while let top = heap.first, top.time <= now.nanoseconds {
            var entry = popMin()
            let interval = intervals[entry.device]
            let oldest = now.nanoseconds - Self.backlogLimit
            if entry.time < oldest {
                entry.time += ((oldest - entry.time) / interval + 1) * interval
            }
            due.append((entry.device, SimInstant(nanoseconds: entry.time)))
            entry.time += interval + Int64.random(in: 0...Self.maximumAdvertisingDelay, using: &generator)
            push(entry)
        }
        return due
    }

    private mutating func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].time < heap[parent].time else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func popMin() -> Entry {
        let top = heap[0]
        let last = heap.removeLast()
        guard !heap.isEmpty else { return top }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].time < heap[smallest].time { smallest = left }
            if right < heap.count, heap[right].time < heap[smallest].time { smallest = right }
            guard smallest != parent else { return top }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
