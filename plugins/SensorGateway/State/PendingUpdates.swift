/// Devices waiting for their next `reading` update, earliest due first: a
/// binary min-heap, O(log n) per push and pop, one entry per waiting device.
///
/// An entry whose device has gone (evicted, expired) stays until it is due
/// and is then skipped; when such entries make the heap larger than twice
/// the devices that can wait, it is rebuilt without them, so its size stays
/// bounded by the device table's capacity.
struct PendingUpdates: Sendable {
    struct Entry: Sendable {
        var due: Duration
        var address: DeviceAddress
    }

    private var heap: [Entry] = []

    var count: Int { heap.count }

    /// The earliest due time.
    var nextDue: Duration? { heap.first?.due }

    mutating func push(_ entry: Entry) {
        heap.append(entry)
        siftUp(heap.count - 1)
    }

    /// The earliest entry if it is due at `now`.
    mutating func popDue(at now: Duration) -> Entry? {
        guard let first = heap.first, first.due <= now else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            siftDown(0)
        }
        return first
    }

    /// Keeps only the entries `keep` accepts.
    mutating func compact(keeping keep: (Entry) -> Bool) {
        heap = heap.filter(keep)
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].due < heap[parent].due else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].due < heap[smallest].due { smallest = left }
            if right < heap.count, heap[right].due < heap[smallest].due { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
