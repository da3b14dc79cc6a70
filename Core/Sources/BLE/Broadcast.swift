import Synchronization

/// Fans values out to any number of `AsyncStream` subscribers. Each
/// subscriber sees the values yielded after it subscribed, in order.
///
/// Each subscriber's stream buffers at most `capacity` values; a subscriber
/// that falls further behind loses its oldest values (the newest are kept,
/// as a state's latest value matters most), counted in ``droppedCount``.
///
/// Values are delivered under the subscribers' lock (see ``yield(_:)``), and
/// a continuation's `yield` may take the Swift runtime's lock of the task it
/// resumes. A stream's termination handler runs under that same task lock
/// when its task is cancelled, so it must never wait for the subscribers'
/// lock (that inversion deadlocked a cancelled write-flow waiter against a
/// concurrent yield): it only records its key under a lock of its own, and
/// the next `stream` or `yield` drops the ended subscribers.
final class Broadcast<Element: Sendable>: Sendable {
    private let subscribers = Mutex<(next: Int, continuations: [Int: AsyncStream<Element>.Continuation])>((0, [:]))
    /// Keys of streams that ended; taken only briefly, never while waiting for another lock.
    private let ended = Mutex<[Int]>([])
    private let drops = Atomic<Int>(0)
    /// How many values each subscriber may have waiting.
    let capacity: Int

    /// A broadcast whose subscribers each buffer at most `capacity` values.
    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Values dropped (oldest first) from subscribers that fell behind.
    var droppedCount: Int { drops.load(ordering: .relaxed) }

    /// How many subscribers there are now.
    var subscriberCount: Int { subscribers.withLock { $0.continuations.count } }

    /// A new stream; `initial` (if any) is its first element.
    func stream(initial: Element? = nil) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .bufferingNewest(capacity))
        if let initial { continuation.yield(initial) }
        let key = subscribers.withLock { state in
            dropEnded(&state.continuations)
            let key = state.next
            state.next += 1
            state.continuations[key] = continuation
            return key
        }
        continuation.onTermination = { [weak self] _ in self?.ended.withLock { $0.append(key) } }
        return stream
    }

    /// A new stream whose first element is `current()`, read under the
    /// subscribers' lock: a value yielded concurrently either is already
    /// reflected in `current()` or arrives after it, never before it and never
    /// lost. `current` must not yield to this broadcast.
    func stream(current: () -> Element) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .bufferingNewest(capacity))
        let key = subscribers.withLock { state in
            dropEnded(&state.continuations)
            continuation.yield(current())
            let key = state.next
            state.next += 1
            state.continuations[key] = continuation
            return key
        }
        continuation.onTermination = { [weak self] _ in self?.ended.withLock { $0.append(key) } }
        return stream
    }

    /// Sends `value` to every subscriber.
    ///
    /// Delivered under the subscribers' lock, so that a stream made with
    /// ``stream(current:)`` sees its first value and every later one in order.
    func yield(_ value: Element) {
        subscribers.withLock { state in
            dropEnded(&state.continuations)
            for continuation in state.continuations.values {
                if case .dropped = continuation.yield(value) { drops.wrappingAdd(1, ordering: .relaxed) }
            }
        }
    }

    /// Ends every stream.
    func finish() {
        for continuation in subscribers.withLock({ Array($0.continuations.values) }) { continuation.finish() }
    }

    /// Forgets the subscribers whose streams ended (called under the subscribers' lock).
    private func dropEnded(_ continuations: inout [Int: AsyncStream<Element>.Continuation]) {
        for key in ended.withLock({ keys in
            defer { keys = [] }; return keys
        }) {
            continuations.removeValue(forKey: key)
        }
    }
}
