import Synchronization

/// Fans values out to any number of `AsyncStream` subscribers. Each
/// subscriber sees the values yielded after it subscribed, in order.
final class Broadcast<Element: Sendable>: Sendable {
    private let subscribers = Mutex<(next: Int, continuations: [Int: AsyncStream<Element>.Continuation])>((0, [:]))

    init() {}

    /// A new stream; `initial` (if any) is its first element.
    func stream(initial: Element? = nil) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .unbounded)
        if let initial { continuation.yield(initial) }
        let key = subscribers.withLock { state in
            let key = state.next
            state.next += 1
            state.continuations[key] = continuation
            return key
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.continuations.removeValue(forKey: key) }
        }
        return stream
    }

    /// A new stream whose first element is `current()`, read under the
    /// subscribers' lock: a value yielded concurrently either is already
    /// reflected in `current()` or arrives after it, never before it and never
    /// lost. `current` must not yield to this broadcast.
    func stream(current: () -> Element) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .unbounded)
        let key = subscribers.withLock { state in
            continuation.yield(current())
            let key = state.next
            state.next += 1
            state.continuations[key] = continuation
            return key
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.continuations.removeValue(forKey: key) }
        }
        return stream
    }

    /// Sends `value` to every subscriber.
    ///
    /// Delivered under the subscribers' lock, so that a stream made with
    /// ``stream(current:)`` sees its first value and every later one in order.
    func yield(_ value: Element) {
        subscribers.withLock { state in
            for continuation in state.continuations.values { continuation.yield(value) }
        }
    }

    /// Ends every stream.
    func finish() {
        for continuation in subscribers.withLock({ Array($0.continuations.values) }) { continuation.finish() }
    }
}
