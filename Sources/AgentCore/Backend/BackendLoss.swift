import Synchronization

/// Tells the role host, at most once, that an opened backend was lost under it: its bus connection closed, or
/// the simulator's bus or blesim exited. A backend being closed on purpose (a stop, a reload) is not a loss.
final class BackendLoss: Sendable {
    /// Which ``BackendFactory/Opened`` this concerns (the role host ignores a loss of one it no longer runs).
    let generation: Int
    private let state = Mutex((closing: false, reported: false))
    private let report: @Sendable (_ generation: Int, _ reason: String) -> Void

    init(generation: Int, report: @escaping @Sendable (_ generation: Int, _ reason: String) -> Void) {
        self.generation = generation
        self.report = report
    }

    /// The backend is being closed on purpose: what follows is not a loss.
    func closing() { state.withLock { $0.closing = true } }

    /// The backend stopped working because of `reason`; reported unless it is being closed or was reported.
    func lost(_ reason: String) {
        let first = state.withLock { state in
            guard !state.closing, !state.reported else { return false }
            state.reported = true
            return true
        }
        if first { report(generation, reason) }
    }
}
