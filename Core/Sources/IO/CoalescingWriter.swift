import Synchronization

/// A file written on a ``BlockingPool`` whenever it changes, the latest value winning: callers await ``save(_:)``,
/// which returns once a write of their value, or of a later one, has finished. Saves asked for while a write runs
/// fold into one next write, so the work is bounded by the writes, never by the requests, and one write runs at a
/// time, in order.
///
/// ``save(_:)`` records its value before its caller's first suspension, on the caller's own executor: two saves
/// made one after the other by an actor are written in that order. A writer whose closure reads its owner's state
/// itself (under the owner's lock, briefly) saves `()`: every write then holds everything changed before it began.
public final class CoalescingWriter<Value: Sendable>: Sendable {
    private struct State {
        var latest: Value?
        var requested: UInt64 = 0
        var written: UInt64 = 0
        var running = false
        var waiters: [(generation: UInt64, continuation: CheckedContinuation<Result<Void, SystemError>, Never>)] = []
        var writes = 0
        var folded = 0
    }

    private let pool: BlockingPool
    private let write: @Sendable (Value) throws(SystemError) -> Void
    private let state = Mutex(State())

    /// A writer running `write` on `pool`.
    public init(pool: BlockingPool = .shared, write: @escaping @Sendable (Value) throws(SystemError) -> Void) {
        self.pool = pool
        self.write = write
    }

    /// Writes performed so far, and saves that were folded into a later write.
    public var counts: (writes: Int, folded: Int) { state.withLock { ($0.writes, $0.folded) } }

    /// Returns once `value` (or a value saved after it) is written; throws that write's error.
    nonisolated(nonsending) public func save(_ value: Value) async throws(SystemError) {
        let result = await withCheckedContinuation { continuation in
            let start = state.withLock { state -> Bool in
                state.requested += 1
                state.latest = value
                state.waiters.append((state.requested, continuation))
                if state.running { return false }
                state.running = true
                return true
            }
            if start { pool.submit { [self] in drain() } }
        }
        try result.get()
    }

    private func drain() {
        while true {
            let next = state.withLock { state -> (UInt64, Value)? in
                guard state.written < state.requested, let value = state.latest else {
                    state.running = false
                    return nil
                }
                state.folded += Int(state.requested - state.written) - 1
                state.writes += 1
                return (state.requested, value)
            }
            guard let (target, value) = next else { return }
            let result = Result { () throws(SystemError) in try write(value) }
            let done = state.withLock { state in
                state.written = target
                let done = state.waiters.filter { $0.generation <= target }.map(\.continuation)
                state.waiters.removeAll { $0.generation <= target }
                return done
            }
            for continuation in done { continuation.resume(returning: result) }
        }
    }
}
