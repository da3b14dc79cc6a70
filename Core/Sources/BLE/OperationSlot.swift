import Synchronization

/// One caller waiting for a queued operation: resumed exactly once, with the
/// result the BlueZ call produced or with the error the queue decided.
final class OperationSlot<Value: Sendable>: Sendable {
    private let state = Mutex<
        (
            result: Result<Value, BLEError>?, continuation: CheckedContinuation<Result<Value, BLEError>, Never>?,
            done: Bool
        )
    >(
        (nil, nil, false))

    init() {}

    /// Waits for the outcome.
    func wait() async -> Result<Value, BLEError> {
        await withCheckedContinuation { continuation in
            let ready: Result<Value, BLEError>? = state.withLock { state in
                if state.done { return state.result }
                state.continuation = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Keeps the result of the latest attempt (delivered by ``deliver()``).
    func store(_ result: Result<Value, BLEError>) {
        state.withLock { if !$0.done { $0.result = result } }
    }

    /// Resumes the caller with the stored result.
    func deliver() {
        finish(nil)
    }

    /// Resumes the caller with `error`.
    func fail(_ error: BLEError) {
        finish(error)
    }

    private func finish(_ error: BLEError?) {
        let (continuation, result): (CheckedContinuation<Result<Value, BLEError>, Never>?, Result<Value, BLEError>?) =
            state.withLock { state in
                guard !state.done else { return (nil, nil) }
                state.done = true
                if let error { state.result = .failure(error) }
                if state.result == nil { state.result = .failure(BLEError(.failed, message: "no result")) }
                let continuation = state.continuation
                state.continuation = nil
                return (continuation, state.result)
            }
        if let continuation, let result { continuation.resume(returning: result) }
    }
}
