import GATT
import Synchronization

/// The requests a ``PeripheralManager`` handed to its plugin and that are not answered yet, each with the instant
/// it arrived, and the one task that answers them with the fallback error once their deadline passes.
///
/// Every request has the same timeout, so arrival order is deadline order: the requests wait in a ``RecencyTable``
/// (oldest first), an answer removes its request in O(1), and a single task sleeps until the oldest deadline,
/// answers what has expired and sleeps again, ending when none waits. A flood of writes costs no task or timer
/// per request, and the number of waiting requests is bounded by what the backend admits (bluetoothd's calls in
/// flight on the connection).
final class RequestDeadlines: Sendable {
    private struct State: Sendable {
        var waiting = RecencyTable<ATTRequestID, ATTRequest>()
        var sweeping = false
    }

    private let state = Mutex(State())
    private let clock: any BLEClock
    private let timeout: Duration
    private let fallback: ATTError

    /// Deadlines `timeout` after arrival on `clock`; an expired request is answered with `fallback`.
    init(clock: any BLEClock, timeout: Duration, fallback: ATTError) {
        self.clock = clock
        self.timeout = timeout
        self.fallback = fallback
    }

    /// `request` arrived now; starts the sweeping task if none runs.
    func add(_ request: ATTRequest) {
        let now = clock.now
        let start = state.withLock { state -> Bool in
            state.waiting.touch(request.info.id, request, at: now)
            guard !state.sweeping else { return false }
            state.sweeping = true
            return true
        }
        if start { Task { await self.sweep() } }
    }

    /// The request `id` was answered.
    func remove(_ id: ATTRequestID) {
        _ = state.withLock { $0.waiting.remove(id) }
    }

    private func sweep() async {
        while true {
            let deadline = state.withLock { state -> BLEInstant? in
                guard let oldest = state.waiting.oldest else {
                    state.sweeping = false
                    return nil
                }
                return oldest.touched + timeout
            }
            guard let deadline else { return }
            do {
                try await clock.sleep(until: deadline)
            } catch {
                state.withLock { $0.sweeping = false }
                return
            }
            let now = clock.now
            let expired = state.withLock { state -> [ATTRequest] in
                var expired: [ATTRequest] = []
                while let (id, arrived) = state.waiting.oldest, now - arrived >= timeout {
                    if let request = state.waiting[id] { expired.append(request) }
                    state.waiting.remove(id)
                }
                return expired
            }
            for request in expired { _ = request.answer(.failure(fallback)) }
        }
    }
}
