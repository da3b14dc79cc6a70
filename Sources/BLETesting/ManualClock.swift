import BLE
import Synchronization

/// A ``BLEClock`` that moves only when the test says so (``advance(by:)``): timeouts, retries and backoff of the
/// managers are tested without waiting, and without depending on how fast the machine is.
public final class ManualClock: BLEClock {
    private struct Sleeper {
        let id: Int
        let deadline: BLEInstant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private let state = Mutex<(now: BLEInstant, next: Int, sleepers: [Sleeper])>((.zero, 0, []))
    /// Tasks waiting for someone to sleep until a given deadline.
    private let watchers = Mutex<[(deadline: BLEInstant, continuation: CheckedContinuation<Void, Never>)]>([])

    /// A clock at ``BLEInstant/zero``.
    public init() {}

    /// The clock's time: zero plus every ``advance(by:)`` so far.
    public var now: BLEInstant { state.withLock { $0.now } }

    /// Returns once the clock reaches `deadline` (at once if it has), or throws when the task is cancelled.
    public func sleep(until deadline: BLEInstant) async throws {
        let id = state.withLock { state in
            state.next += 1
            return state.next
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow = state.withLock { state -> Bool in
                    if deadline <= state.now || Task.isCancelled { return true }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return false
                }
                if resumeNow { continuation.resume() } else { sleeperArrived(deadline) }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
        try Task.checkCancellation()
    }

    /// Returns once something sleeps until `deadline` (already, or later): an
    /// event to wait on instead of a real sleep.
    public func waitForSleeper(until deadline: BLEInstant) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            watchers.withLock { watchers in
                if state.withLock({ $0.sleepers.contains { $0.deadline == deadline } }) {
                    continuation.resume()
                } else {
                    watchers.append((deadline, continuation))
                }
            }
        }
    }

    private func sleeperArrived(_ deadline: BLEInstant) {
        let due = watchers.withLock { watchers in
            let due = watchers.filter { $0.deadline == deadline }
            watchers.removeAll { $0.deadline == deadline }
            return due
        }
        for watcher in due { watcher.continuation.resume() }
    }

    /// Moves time forward by `duration`, waking every sleeper whose deadline passed.
    public func advance(by duration: Duration) {
        let due = state.withLock { state -> [Sleeper] in
            state.now = state.now + duration
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }
}
