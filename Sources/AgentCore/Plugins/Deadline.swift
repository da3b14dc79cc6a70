import Synchronization

/// Runs work in its own task and waits for it or for a deadline, whichever
/// comes first. The work is not abandoned (a Swift task cannot be killed); it
/// is left to finish on its own.
enum Deadline {
    /// The work's result, or `nil` if `limit` passed first.
    static func run<Value: Sendable>(
        within limit: Duration, _ work: @escaping @Sendable () async throws -> Value
    ) async -> Result<Value, any Error>? {
        let slot = Mutex<CheckedContinuation<Result<Value, any Error>?, Never>?>(nil)
        let resume: @Sendable (Result<Value, any Error>?) -> Void = { outcome in
            slot.withLock { continuation in
                continuation?.resume(returning: outcome)
                continuation = nil
            }
        }
        return await withCheckedContinuation { continuation in
            slot.withLock { $0 = continuation }
            let timer = Task {
                // A timer, not a poll: it fires once, or is cancelled when the work ends first.
                guard (try? await Task.sleep(for: limit)) != nil else { return }
                resume(nil)
            }
            Task {
                let outcome: Result<Value, any Error>
                do { outcome = .success(try await work()) } catch { outcome = .failure(error) }
                timer.cancel()
                resume(outcome)
            }
        }
    }
}
