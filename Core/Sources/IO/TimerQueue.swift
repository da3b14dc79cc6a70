/// The deadlines of an ``EventLoop``'s timers: a binary min-heap of `(deadline, id)` beside a table of the live
/// timers' jobs. Cancelling removes the job; its heap entry is skipped when it surfaces, and the heap is rebuilt
/// once dead entries outnumber live ones, so memory follows the live timers. Pure state.
struct TimerQueue<Job> {
    private var heap: [(deadline: ContinuousClock.Instant, id: UInt64)] = []
    private var jobs: [UInt64: Job] = [:]

    /// The number of live timers.
    var count: Int { jobs.count }

    /// Adds `job` under `id`, due at `deadline`.
    mutating func insert(_ job: Job, id: UInt64, deadline: ContinuousClock.Instant) {
        jobs[id] = job
        push(deadline, id)
    }

    /// Removes the timer `id`; whether it was still pending.
    @discardableResult
    mutating func cancel(_ id: UInt64) -> Bool {
        guard jobs.removeValue(forKey: id) != nil else { return false }
        if heap.count > 2 * jobs.count + 64 { compact() }
        return true
    }

    /// The earliest live deadline.
    mutating func earliest() -> ContinuousClock.Instant? {
        while let first = heap.first, jobs[first.id] == nil { _ = popFirst() }
        return heap.first?.deadline
    }

    /// Removes and returns the jobs due at `now`, earliest first.
    mutating func popDue(now: ContinuousClock.Instant) -> [Job] {
        var due: [Job] = []
        while let first = heap.first, first.deadline <= now {
            _ = popFirst()
            if let job = jobs.removeValue(forKey: first.id) { due.append(job) }
        }
        return due
    }

    /// Removes every timer and returns nothing of them (the loop stopped).
    mutating func removeAll() {
        heap = []
        jobs = [:]
    }

    private mutating func push(_ deadline: ContinuousClock.Instant, _ id: UInt64) {
        heap.append((deadline, id))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func popFirst() -> (deadline: ContinuousClock.Instant, id: UInt64)? {
        guard let first = heap.first else { return nil }
        let last = heap.removeLast()
        guard !heap.isEmpty else { return first }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count, heap[right].deadline < heap[smallest].deadline { smallest = right }
            if smallest == parent { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return first
    }

    private mutating func compact() {
        let live = heap.filter { jobs[$0.id] != nil }
        heap = []
        for entry in live { push(entry.deadline, entry.id) }
    }
}
