import Synchronization

/// The buffer of an ``AsyncQueue``: how values wait for the consumer and what
/// happens when it falls behind (each a pure value type).
protocol QueueBuffer: Sendable {
    associatedtype Input: Sendable
    associatedtype Output: Sendable
    /// Takes a value; returns how many values were dropped to make room (or the value itself).
    mutating func push(_ input: Input) -> Int
    /// The next value for the consumer, if any.
    mutating func pop() -> Output?
    /// How many values wait.
    var count: Int { get }
    /// How many pushes were merged into a value that already waited.
    var merged: Int { get }
}

extension QueueBuffer {
    var merged: Int { 0 }
}

/// What an ``AsyncQueue`` went through, for statistics.
public struct QueueCounters: Hashable, Sendable {
    /// Values offered by the producer.
    public var offered = 0
    /// Values handed to the consumer (after merging, for a coalescing queue).
    public var delivered = 0
    /// Values merged into one that already waited (coalescing queues).
    public var merged = 0
    /// Values dropped because the buffer was full.
    public var dropped = 0
    /// Values waiting now.
    public var waiting = 0
    /// The most values that waited at once.
    public var highWater = 0

    /// Counters with every field zero.
    public init() {}

    /// The sum of two sets of counters (``waiting`` and ``highWater`` add too).
    public static func + (lhs: QueueCounters, rhs: QueueCounters) -> QueueCounters {
        var sum = lhs
        sum.offered += rhs.offered
        sum.delivered += rhs.delivered
        sum.merged += rhs.merged
        sum.dropped += rhs.dropped
        sum.waiting += rhs.waiting
        sum.highWater = max(lhs.highWater, rhs.highWater)
        return sum
    }
}

/// One producer, one consumer, a bounded buffer between them.
///
/// The producer never blocks: ``push(_:)`` stores the value in the buffer,
/// which decides what to drop when it is full, and reports whether a waiting
/// consumer must be woken. Waking can be deferred to the end of a batch
/// (``wake()``): a flood costs one task resumption per batch, not one per value.
/// The consumer's task being cancelled ends the queue, like ``finish()``;
/// `onTermination` runs once when the queue ends for either reason.
final class AsyncQueue<Buffer: QueueBuffer>: Sendable {
    private struct State: Sendable {
        var buffer: Buffer
        var waiter: CheckedContinuation<Buffer.Output?, Never>? {
            didSet { hasWaiter = waiter != nil }
        }
        /// Whether ``waiter`` is set, read per push without copying the continuation.
        var hasWaiter = false
        var finished = false
        var wakePending = false
        var counters = QueueCounters()
        var onTermination: (@Sendable () -> Void)?
        var onDrain: (@Sendable (Int) -> Void)?
    }

    private let state: Mutex<State>

    init(_ buffer: Buffer) {
        state = Mutex(State(buffer: buffer))
    }

    /// Called once when the queue ends (finished or the consumer cancelled).
    func setOnTermination(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.onTermination = handler }
    }

    /// Called after each value the consumer takes, with how many still wait
    /// (for a producer that pauses at a high mark).
    func setOnDrain(_ handler: @escaping @Sendable (Int) -> Void) {
        state.withLock { $0.onDrain = handler }
    }

    /// What a push found.
    struct PushOutcome: Sendable {
        /// A consumer waits and must be woken with ``wake()`` (reported once:
        /// later pushes say false until then).
        var needsWake: Bool
        /// How many values wait now.
        var waiting: Int
    }

    /// Stores `input` (nothing once finished).
    @discardableResult
    func push(_ input: Buffer.Input) -> PushOutcome {
        state.withLock { state in
            guard !state.finished else { return PushOutcome(needsWake: false, waiting: 0) }
            state.counters.offered += 1
            state.counters.dropped += state.buffer.push(input)
            let waiting = state.buffer.count
            state.counters.highWater = max(state.counters.highWater, waiting)
            guard state.hasWaiter, !state.wakePending else {
                return PushOutcome(needsWake: false, waiting: waiting)
            }
            state.wakePending = true
            return PushOutcome(needsWake: true, waiting: waiting)
        }
    }

    /// Stores `input` and wakes a waiting consumer at once.
    func pushAndWake(_ input: Buffer.Input) {
        if push(input).needsWake { wake() }
    }

    /// Hands the next value to a waiting consumer, if both exist.
    func wake() {
        let (waiter, value, drain, waiting) = state.withLock {
            state -> (CheckedContinuation<Buffer.Output?, Never>?, Buffer.Output?, (@Sendable (Int) -> Void)?, Int) in
            state.wakePending = false
            guard let waiter = state.waiter, let value = state.buffer.pop() else { return (nil, nil, nil, 0) }
            state.counters.delivered += 1
            state.waiter = nil
            return (waiter, value, state.onDrain, state.buffer.count)
        }
        guard let waiter else { return }
        waiter.resume(returning: value)
        drain?(waiting)
    }

    /// The next value, waiting for one; nil once finished (values still
    /// buffered are delivered first) or when the task is cancelled.
    func next() async -> Buffer.Output? {
        if let ready = takeReady() { return ready }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Buffer.Output?, Never>) in
                let (immediate, drain, waiting) = state.withLock {
                    state -> (Buffer.Output??, (@Sendable (Int) -> Void)?, Int) in
                    if let value = state.buffer.pop() {
                        state.counters.delivered += 1
                        return (.some(value), state.onDrain, state.buffer.count)
                    }
                    if state.finished || Task.isCancelled { return (.some(nil), nil, 0) }
                    state.waiter = continuation
                    return (nil, nil, 0)
                }
                if let immediate {
                    continuation.resume(returning: immediate)
                    drain?(waiting)
                }
            }
        } onCancel: {
            finish()
        }
    }

    /// Ends the queue: a waiting consumer gets nil, later pushes are ignored.
    func finish() {
        let (waiter, handler) = state.withLock {
            state -> (CheckedContinuation<Buffer.Output?, Never>?, (@Sendable () -> Void)?) in
            guard !state.finished else { return (nil, nil) }
            state.finished = true
            defer {
                state.waiter = nil
                state.onTermination = nil
                state.onDrain = nil
            }
            return (state.waiter, state.onTermination)
        }
        waiter?.resume(returning: nil)
        handler?()
    }

    /// How many values wait now.
    var waitingCount: Int { state.withLock { $0.buffer.count } }

    /// Whether the queue has ended.
    var isFinished: Bool { state.withLock { $0.finished } }

    /// What went through the queue so far.
    var counters: QueueCounters {
        state.withLock { state in
            var counters = state.counters
            counters.waiting = state.buffer.count
            counters.merged = state.buffer.merged
            return counters
        }
    }

    /// A value already waiting (or nil once finished), without suspending; nil when the consumer must wait.
    private func takeReady() -> Buffer.Output?? {
        let (ready, drain, waiting) = state.withLock { state -> (Buffer.Output??, (@Sendable (Int) -> Void)?, Int) in
            if let value = state.buffer.pop() {
                state.counters.delivered += 1
                return (.some(value), state.onDrain, state.buffer.count)
            }
            return (state.finished ? .some(nil) : nil, nil, 0)
        }
        drain?(waiting)
        return ready
    }
}

/// A first-in first-out buffer of at most `capacity` values; when full, the
/// oldest value is dropped for the new one. Its storage grows by doubling up
/// to the capacity and is released when it empties.
struct FIFOBuffer<Element: Sendable>: QueueBuffer {
    let capacity: Int
    private var storage: [Element?] = []
    private var head = 0
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    mutating func push(_ input: Element) -> Int {
        var dropped = 0
        if count == capacity {
            _ = pop()
            dropped = 1
        }
        if count == storage.count { grow() }
        storage[(head + count) % storage.count] = input
        count += 1
        return dropped
    }

    mutating func pop() -> Element? {
        guard count > 0 else { return nil }
        let value = storage[head]
        storage[head] = nil
        head = (head + 1) % storage.count
        count -= 1
        if count == 0 {
            head = 0
            if storage.count > 64 { storage = [] }
        }
        return value
    }

    private mutating func grow() {
        let size = Swift.min(capacity, Swift.max(16, storage.count * 2))
        var grown = [Element?](repeating: nil, count: size)
        for offset in 0..<count { grown[offset] = storage[(head + offset) % storage.count] }
        storage = grown
        head = 0
    }
}

/// One waiting value per key, at most `capacity` keys: a value for a key that
/// already waits replaces it (the newest wins) and adds its count, keeping
/// its place in line; a new key beyond the capacity is dropped. Memory is
/// bounded by the number of keys, never by time.
struct CoalescingBuffer<Key: Hashable & Sendable, Element: Sendable>: QueueBuffer {
    let capacity: Int
    private var waiting: [Key: (element: Element, count: Int)] = [:]
    private var order: FIFOBuffer<Key>
    /// How many pushes were merged into a value that already waited.
    private(set) var merged = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        order = FIFOBuffer(capacity: self.capacity)
    }

    var count: Int { waiting.count }

    mutating func push(_ input: (key: Key, element: Element, count: Int)) -> Int {
        if let index = waiting.index(forKey: input.key) {
            waiting.values[index].element = input.element
            waiting.values[index].count += input.count
            merged += 1
            return 0
        }
        guard waiting.count < capacity else { return 1 }
        waiting[input.key] = (input.element, input.count)
        _ = order.push(input.key)
        return 0
    }

    mutating func pop() -> (element: Element, count: Int)? {
        while let key = order.pop() {
            if let entry = waiting.removeValue(forKey: key) { return entry }
        }
        return nil
    }
}
