import Synchronization

extension ObjectServer {
    /// The bounds on the calls one connection serves at once (docs/ARCHITECTURE.md, "Bounds").
    public struct Limits: Sendable, Hashable {
        /// The most handlers running at once; further calls wait, in arrival order.
        public var maxCallsInFlight: Int
        /// The most calls waiting for a running slot; past it a call is refused at once with
        /// `org.freedesktop.DBus.Error.LimitsExceeded` (and counted), never queued.
        public var maxQueuedCalls: Int

        /// Limits with the given bounds (each at least 1).
        public init(maxCallsInFlight: Int = 64, maxQueuedCalls: Int = 1024) {
            self.maxCallsInFlight = max(1, maxCallsInFlight)
            self.maxQueuedCalls = max(1, maxQueuedCalls)
        }
    }

    /// What the server's bounds have seen.
    public struct CallCounters: Sendable, Hashable {
        /// Handlers running now.
        public var inFlight: Int
        /// Calls waiting for a slot now.
        public var queued: Int
        /// Calls refused with `LimitsExceeded` since the connection opened.
        public var refused: Int
        /// The most handlers that ran at once.
        public var peakInFlight: Int
    }
}

/// The slots of an ``ObjectServer``: at most `maxCallsInFlight` handlers run; the one serving task waits for a
/// free slot before it starts the next call. Calls waiting meanwhile sit in the incoming stream, which holds at
/// most `maxQueuedCalls`.
final class CallAdmission: Sendable {
    private struct State {
        var limits: ObjectServer.Limits
        var inFlight = 0
        var queued = 0
        var refused = 0
        var peak = 0
        var waiter: CheckedContinuation<Void, Never>?

        mutating func take() {
            queued -= 1
            inFlight += 1
            peak = max(peak, inFlight)
        }
    }

    private let state: Mutex<State>

    init(limits: ObjectServer.Limits) {
        state = Mutex(State(limits: limits))
    }

    var limits: ObjectServer.Limits {
        get { state.withLock { $0.limits } }
        set { state.withLock { $0.limits = newValue } }
    }

    var counters: ObjectServer.CallCounters {
        state.withLock {
            ObjectServer.CallCounters(
                inFlight: $0.inFlight, queued: $0.queued, refused: $0.refused, peakInFlight: $0.peak)
        }
    }

    /// Whether a new call may wait for a slot (owner thread); `false` counts a refusal.
    func admit() -> Bool {
        state.withLock { state in
            guard state.queued < state.limits.maxQueuedCalls else {
                state.refused += 1
                return false
            }
            state.queued += 1
            return true
        }
    }

    /// Waits until a handler may start, and takes its slot (the serving task, one call at a time).
    func acquire() async {
        let granted = state.withLock { state -> Bool in
            guard state.inFlight < state.limits.maxCallsInFlight else { return false }
            state.take()
            return true
        }
        if granted { return }
        await withCheckedContinuation { continuation in
            let granted = state.withLock { state -> Bool in
                guard state.inFlight < state.limits.maxCallsInFlight else {
                    state.waiter = continuation
                    return false
                }
                state.take()
                return true
            }
            if granted { continuation.resume() }
        }
    }

    /// A handler finished: its slot goes to the waiting call, if any.
    func release() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.inFlight -= 1
            guard let waiter = state.waiter, state.inFlight < state.limits.maxCallsInFlight else { return nil }
            state.waiter = nil
            state.take()
            return waiter
        }
        waiter?.resume()
    }
}
