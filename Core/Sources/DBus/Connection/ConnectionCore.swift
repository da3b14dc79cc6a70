import IO
import Synchronization

/// The state one connection shares between its owner thread and the tasks using it.
///
/// Each piece has one owner: the ``EventLoop`` runs on the owner thread, the ``Mailbox`` carries work to it, the
/// ``SignalRouter`` holds signal subscriptions, the ``ObjectServer`` holds exported objects, and the pending-call
/// table belongs to the owner thread's ``ConnectionDriver``.
final class ConnectionCore: Sendable {
    private struct Lifecycle {
        var closed = false
        var reason: String?
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    let loop: EventLoop
    let mailbox: Mailbox
    let signals = SignalRouter()
    let objects: ObjectServer
    private let nextCallID = Atomic<UInt64>(1)
    private let lifecycle = Mutex(Lifecycle())
    /// The shortest time between two reads of the socket during a flood of signals (see
    /// ``DBusConnection/connect(address:registerOnBus:readInterval:)``).
    let readInterval: Duration
    /// Reads of the socket, and readinesses left for the end of ``readInterval`` (owner thread writes).
    let reads = Atomic<Int>(0)
    let pacedReadinesses = Atomic<Int>(0)

    init(readInterval: Duration) throws(DBusError) {
        self.readInterval = readInterval
        do {
            loop = try EventLoop(name: "dbus")
        } catch {
            throw DBusError(.noMemory, "cannot create the connection's event loop: \(error)")
        }
        mailbox = Mailbox(loop: loop)
        objects = ObjectServer(mailbox: mailbox)
    }

    func makeCallID() -> UInt64 { nextCallID.wrappingAdd(1, ordering: .relaxed).oldValue }

    var isClosed: Bool { lifecycle.withLock { $0.closed } }

    /// Why the connection's reading ended, when it was not a plain end of stream or close.
    var closeReason: String? { lifecycle.withLock { $0.reason } }

    /// Records why reading ended (owner thread); the first reason stays.
    func recordCloseReason(_ reason: String) {
        lifecycle.withLock { state in
            if state.reason == nil { state.reason = reason }
        }
    }

    /// Marks the connection closed and wakes everyone waiting for it (owner thread, last step).
    func markClosed() {
        let waiters = lifecycle.withLock { state in
            state.closed = true
            let waiters = state.waiters
            state.waiters = []
            return waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the owner thread has released the connection.
    func waitUntilClosed() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let alreadyClosed = lifecycle.withLock { state in
                if state.closed { return true }
                state.waiters.append(continuation)
                return false
            }
            if alreadyClosed { continuation.resume() }
        }
    }
}
