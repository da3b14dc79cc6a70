import Synchronization

/// Collects values from any thread or task and lets a test await a count of them (an event, not a poll).
public final class Recorder<T: Sendable>: Sendable {
    private struct State {
        var values: [T] = []
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    /// An empty recorder.
    public init() {}

    /// Everything recorded so far, in order.
    public var values: [T] { state.withLock { $0.values } }

    /// Records `value`.
    public func append(_ value: T) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.values.append(value)
            let ready = state.waiters.filter { $0.count <= state.values.count }.map(\.continuation)
            state.waiters.removeAll { $0.count <= state.values.count }
            return ready
        }
        ready.forEach { $0.resume() }
    }

    /// Returns once `count` values were recorded (the test's time limit bounds the wait).
    public func wait(for count: Int) async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                if state.values.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }
}

/// How many of something run at once, and the most that ever did.
public final class Concurrency: Sendable {
    private let state = Mutex((running: 0, peak: 0))
    /// Every entry, for awaiting a count of them.
    public let entries = Recorder<Int>()

    /// Nothing running yet.
    public init() {}

    /// One more runs.
    public func enter() {
        let running = state.withLock { state in
            state.running += 1
            state.peak = max(state.peak, state.running)
            return state.running
        }
        entries.append(running)
    }

    /// One fewer runs.
    public func leave() { state.withLock { $0.running -= 1 } }

    /// The most that ran at once.
    public var peak: Int { state.withLock { $0.peak } }
}
