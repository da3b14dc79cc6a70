import Synchronization

/// Jobs that must reach the disk in order (a journal's appends): run one at a time on a ``BlockingPool``, in the
/// order they were submitted.
///
/// ``run(_:)`` queues its job before its caller's first suspension, on the caller's own executor: two calls made
/// one after the other by an actor run in that order, whatever the pool does.
public final class BlockingQueue: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var draining = false
    }

    private let pool: BlockingPool
    private let state = Mutex(State())

    /// A queue on `pool`.
    public init(pool: BlockingPool = .shared) {
        self.pool = pool
    }

    /// Runs `work` after every job submitted before it, on a pool thread, and returns (or throws) its result.
    nonisolated(nonsending) public func run<T: Sendable, E: Error>(
        _ work: @escaping @Sendable () throws(E) -> T
    ) async throws(E) -> T {
        try await awaitResult(of: work, submittedBy: submit)
    }

    /// Queues `job` behind the jobs submitted before it, without waiting.
    public func submit(_ job: @escaping @Sendable () -> Void) {
        let start = state.withLock { state -> Bool in
            state.jobs.append(job)
            defer { state.draining = true }
            return !state.draining
        }
        if start { pool.submit { [self] in drain() } }
    }

    private func drain() {
        while true {
            let next = state.withLock { state -> (@Sendable () -> Void)? in
                guard !state.jobs.isEmpty else {
                    state.draining = false
                    return nil
                }
                return state.jobs.removeFirst()
            }
            guard let next else { return }
            next()
        }
    }
}
