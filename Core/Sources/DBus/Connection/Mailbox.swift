import IO
import Synchronization

/// Work handed to the owner thread. Only the owner thread touches the libdbus connection; everyone else posts here.
enum LoopCommand: Sendable {
    /// Send a message that expects no reply (signals, replies, no-reply calls).
    case send(DBusMessage)
    /// Send a method call and resolve the request when its reply, an error, the deadline or a cancel comes.
    case call(CallRequest)
    /// The awaiting task of call `id` was cancelled.
    case cancel(UInt64)
    /// Run the action (on the owner thread) when every message queued before it has been written to the socket,
    /// or the connection is gone.
    case flush(@Sendable () -> Void)
    /// Close the connection.
    case close
}

/// A method call waiting to be sent.
struct CallRequest: Sendable {
    let id: UInt64
    let message: DBusMessage
    let timeout: Duration
    let deadline: ContinuousClock.Instant
    let cancellation: CancellationFlag
    let continuation: CheckedContinuation<DBusMessage, any Error>
}

/// Set by the cancellation handler of a call; read by the owner thread when it picks the call up.
final class CancellationFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    func cancel() { flag.store(true, ordering: .releasing) }
    var isCancelled: Bool { flag.load(ordering: .acquiring) }
}

/// The Mutex-guarded queue of ``LoopCommand``s that the owner thread drains.
///
/// Posting is a lock and an append; the first post after each drain hands the owner's event loop one job that
/// drains the queue, so floods of signals cost one loop wake-up per batch, not per message. Commands posted before
/// the connection is open wait for its first drain.
final class Mailbox: Sendable {
    private struct State {
        var commands: [LoopCommand] = []
        var drainPending = false
        var closed = false
        var drain: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())
    private let loop: EventLoop

    init(loop: EventLoop) {
        self.loop = loop
    }

    /// Sets what drains the queue on the loop (the driver, once the connection is open), and runs it once.
    func start(draining drain: @escaping @Sendable () -> Void) {
        state.withLock { state in
            state.drain = drain
            state.drainPending = true
        }
        loop.execute(drain)
    }

    /// Queues `command`; returns `false` (and does nothing) once the connection is closed.
    func post(_ command: LoopCommand) -> Bool {
        let (accepted, drain) = state.withLock { state -> (Bool, (@Sendable () -> Void)?) in
            guard !state.closed else { return (false, nil) }
            state.commands.append(command)
            if state.drainPending || state.drain == nil { return (true, nil) }
            state.drainPending = true
            return (true, state.drain)
        }
        if let drain { loop.execute(drain) }
        return accepted
    }

    /// Takes every queued command (owner thread).
    func take() -> [LoopCommand] {
        state.withLock { state in
            state.drainPending = false
            let commands = state.commands
            state.commands = []
            return commands
        }
    }

    /// Refuses further posts and returns what was still queued (owner thread, at teardown).
    func close() -> [LoopCommand] {
        state.withLock { state in
            state.closed = true
            state.drain = nil
            let commands = state.commands
            state.commands = []
            return commands
        }
    }
}
