import Synchronization

/// Write commands read from a central's AcquireWrite socket on their way to a local application's WriteValue (or
/// its own AcquireWrite socket), in order, one at a time.
///
/// Bounded: once ``limit`` wait, the central's socket is left unread (``AcquiredSockets/AfterPacket/hold``) until
/// half of them are delivered, so a central writing faster than the application takes them fills its own socket
/// and sees EAGAIN, as the channel's credits make it over the air. (Without the bound the simulator kept every
/// command a saturated writer sent: hundreds of thousands, seconds behind.)
final class WriteCommandQueue: Sendable {
    /// The most commands waiting for delivery.
    static let limit = 64

    private struct State {
        var waiting = 0
        var holding = false
        var resume: (@Sendable () -> Void)?
    }

    /// The commands, in the order read; bounded by ``limit`` through ``accept(_:)``.
    let commands: AsyncStream<[UInt8]>
    private let continuation: AsyncStream<[UInt8]>.Continuation
    private let state = Mutex(State())

    init() {
        (commands, continuation) = AsyncStream.makeStream()
    }

    /// Sets what resumes reading the socket after a hold (the socket's reader, once it exists).
    func setResume(_ resume: @escaping @Sendable () -> Void) {
        state.withLock { $0.resume = resume }
    }

    /// Queues a command read from the socket; says whether the socket is read on or held.
    func accept(_ bytes: [UInt8]) -> AcquiredSockets.AfterPacket {
        let full = state.withLock { state -> Bool in
            state.waiting += 1
            if state.waiting >= Self.limit { state.holding = true }
            return state.holding
        }
        continuation.yield(bytes)
        return full ? .hold : .readOn
    }

    /// One command was delivered: reading resumes once half the queue is free.
    func delivered() {
        let resume = state.withLock { state -> (@Sendable () -> Void)? in
            state.waiting -= 1
            guard state.holding, state.waiting <= Self.limit / 2 else { return nil }
            state.holding = false
            return state.resume
        }
        resume?()
    }

    /// No more commands (the socket closed).
    func finish() {
        continuation.finish()
    }
}
