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

    /// Sends `value` to every subscriber.
    func yield(_ value: Element) {
        for continuation in subscribers.withLock({ Array($0.continuations.values) }) { continuation.yield(value) }
    }

    /// Ends every stream.
    func finish() {
        for continuation in subscribers.withLock({ Array($0.continuations.values) }) { continuation.finish() }
    }
}
