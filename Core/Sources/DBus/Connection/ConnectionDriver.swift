import Glibc
import IO
import Synchronization

/// The owner thread's side of one connection: the only code that touches the libdbus connection after it is set
/// up, driven by the connection's ``EventLoop``.
///
/// libdbus opens the connection (authentication, `Hello`) and writes to it; reading is the driver's own: a
/// ``WireSocketReader`` cuts the socket's bytes into messages in wire form, whose headers it checks, and bodies are
/// decoded from those bytes when they are read. (libdbus's reader validated every body in full, taking a global
/// lock per variant, before anyone looked at it: a third of the thread's time under a flood of signals.)
///
/// Its loop's jobs are the ``Mailbox`` drains (sending messages, registering calls under their reply serial) and the
/// dispatch of what was read (replies resume their callers, signals go to the ``SignalRouter`` by
/// ``SignalRouter/route(_:)`` on this thread, in arrival order, method calls to the ``ObjectServer``); its
/// descriptors and timers are the socket, libdbus's watches and timeouts (``WatchTable``) and the calls'
/// deadlines. It never blocks on D-Bus: every call made here reads or writes only what the socket takes without
/// waiting. The one wait it makes is on purpose and bounded: during a flood of signals it sleeps out the rest of
/// the connection's read interval before reading again (see
/// ``DBusConnection/connect(address:registerOnBus:readInterval:)``).
final class ConnectionDriver: Sendable {
    private struct PendingCall {
        let id: UInt64
        let timeout: Duration
        let continuation: CheckedContinuation<DBusMessage, any Error>
        let timer: EventLoop.Timer
    }

    private struct State {
        var pending: [UInt32: PendingCall] = [:]
        var serials: [UInt64: UInt32] = [:]
        var flushWaiters: [@Sendable () -> Void] = []
        var closing = false
        var disconnected = false
        var dispatchScheduled = false
        var finished = false
        /// The earliest a signal handler may hear the next end of a run of messages, and whether a timer will tell
        /// it then.
        var nextBatchEnd = ContinuousClock.now
        var batchEndScheduled = false
        /// When the socket was last read, and whether that read brought only signals and emptied the socket: what
        /// decides whether the next readiness is read at once or paced (see ``ConnectionCore/readInterval``).
        var lastRead: ContinuousClock.Instant?
        var lastReadOnlySignals = false
    }

    /// The shortest time between two ends of a run of messages that signal handlers hear. Each end wakes the
    /// handlers' consumers (a thread hand-over, a futex wake and a sleep on each side); under a flood the socket
    /// yields a few messages per read, so ending every read's run cost about a fifth of the agent's ingest CPU.
    /// A run that follows a quiet interval ends at once; under load handlers hear an end at most this often, so
    /// what they deliver waits at most this long.
    static let batchEndInterval = Duration.microseconds(500)

    /// How long a closing connection may spend writing what is still queued before it is dropped.
    private static let closeGrace = Duration.seconds(2)
    /// How many incoming messages are dispatched before the loop turns to its other work.
    private static let dispatchBudget = 256

    private let core: ConnectionCore
    /// The libdbus connection's bit pattern; only the owner thread turns it back into the pointer.
    private let handle: UInt
    private let state = Mutex(State())
    private let table: WatchTable
    /// The socket's reader, once the driver has taken reading over from libdbus (owner thread only).
    private let reader = Mutex<WireSocketReader?>(nil)

    init(core: ConnectionCore, connection: OpaquePointer) {
        self.core = core
        handle = UInt(bitPattern: Int(bitPattern: connection))
        let loop = core.loop
        // Weak: the table lives in the driver; the loop's registrations of it go at teardown.
        let afterIO = WeakBox<ConnectionDriver>()
        table = WatchTable(loop: loop) { afterIO.value?.afterIO() }
        afterIO.value = self
    }

    private var loop: EventLoop { core.loop }

    private var connection: OpaquePointer {
        guard let pointer = OpaquePointer(bitPattern: handle) else { fatalError("no libdbus connection") }
        return pointer
    }

    /// Installs the libdbus hooks, delivers what libdbus read while opening the connection, takes reading over and
    /// starts draining the mailbox; call on the owner thread before running the loop.
    func start() -> Bool {
        guard LoopHooks.install(on: connection, table: table, driver: self) else { return false }
        // libdbus read the reply to Hello, and perhaps the NameAcquired signal after it, while opening; those are
        // whole messages in its queue (a message is written by the bus in one piece), and come first.
        while LibDBus.dispatchOne(connection) {}
        if let fd = LibDBus.socketFD(connection) {
            reader.withLock { $0 = WireSocketReader(fd: fd) }
            table.takeOverReading(fd: fd) { [weak self] in self?.socketReady() }
        }
        core.mailbox.start { [self] in drainMailbox() }
        scheduleDispatch()
        return true
    }

    // MARK: Commands

    private func drainMailbox() {
        guard !state.withLock({ $0.finished }) else { return }
        for command in core.mailbox.take() {
            switch command {
            case .send(let message):
                // A received message has no libdbus form and is not sent again.
                _ = message.withRaw { LibDBus.send(connection, $0) }
            case .call(let request):
                start(request)
            case .cancel(let id):
                let call = state.withLock { state -> PendingCall? in
                    guard let serial = state.serials.removeValue(forKey: id) else { return nil }
                    return state.pending.removeValue(forKey: serial)
                }
                if let call {
                    loop.cancel(call.timer)
                    call.continuation.resume(throwing: CancellationError())
                }
            case .flush(let waiter):
                state.withLock { $0.flushWaiters.append(waiter) }
            case .close:
                let first = state.withLock { state in
                    defer { state.closing = true }
                    return !state.closing
                }
                if first { loop.schedule(after: Self.closeGrace) { [self] in teardown() } }
            }
        }
        checkState()
    }

    private func start(_ request: CallRequest) {
        if request.cancellation.isCancelled {
            request.continuation.resume(throwing: CancellationError())
            return
        }
        let sent = request.message.withRaw { raw -> UInt32? in
            // A message sent before keeps its serial; its reply could not be told from the earlier one's.
            guard LibDBus.serial(raw) == 0 else { return nil }
            return LibDBus.send(connection, raw)
        }
        guard let sent else {
            request.continuation.resume(throwing: DBusMessage.receivedMessageError)
            return
        }
        guard let serial = sent, state.withLock({ $0.pending[serial] == nil }) else {
            request.continuation.resume(
                throwing: DBusError(.invalidArgs, "the call could not be queued (a message can be called only once)"))
            return
        }
        let id = request.id
        let timer = loop.schedule(at: request.deadline) { [self] in expire(id) }
        state.withLock { state in
            state.pending[serial] = PendingCall(
                id: id, timeout: request.timeout, continuation: request.continuation, timer: timer)
            state.serials[id] = serial
        }
    }

    private func expire(_ id: UInt64) {
        let call = state.withLock { state -> PendingCall? in
            guard let serial = state.serials.removeValue(forKey: id) else { return nil }
            return state.pending.removeValue(forKey: serial)
        }
        call?.continuation.resume(throwing: DBusError(.noReply, "no reply within \(call?.timeout ?? .zero)"))
    }

    // MARK: Incoming

    /// Asks the loop for a dispatch turn (libdbus's dispatch-status hook, from any thread, and after I/O).
    func scheduleDispatch() {
        let schedule = state.withLock { state -> Bool in
            guard !state.dispatchScheduled, !state.finished else { return false }
            state.dispatchScheduled = true
            return true
        }
        if schedule { loop.execute { [self] in dispatch() } }
    }

    private func dispatch() {
        guard
            !state.withLock({ state in
                state.dispatchScheduled = false
                return state.finished
            })
        else { return }
        var remains = false
        for _ in 0..<Self.dispatchBudget {
            remains = LibDBus.dispatchOne(connection)
            if !remains { break }
        }
        endBatch()
        if remains { scheduleDispatch() }
        checkState()
    }

    /// The socket is readable, or hung up (owner thread): reads it at once or, within the read interval of a read
    /// that brought only signals and emptied the socket while no reply is awaited, when that interval is over.
    /// Reading is paced so only during a flood of signals: each read then takes what arrived over the interval,
    /// not the two or three messages that arrive while the thread wakes up. The thread sleeps out the rest of the
    /// interval (at most the interval, 500 µs by default): its loop has nothing else to do that cannot wait that
    /// long, and a sleep needs no change to what the loop watches.
    private func socketReady() {
        let now = ContinuousClock.now
        let interval = core.readInterval
        let resume = state.withLock { state -> ContinuousClock.Instant? in
            guard state.lastReadOnlySignals, state.pending.isEmpty, let last = state.lastRead, now - last < interval
            else { return nil }
            return last + interval
        }
        if let resume {
            core.pacedReadinesses.wrappingAdd(1, ordering: .relaxed)
            Self.sleep(until: resume)
        }
        readSocket()
    }

    /// Blocks the owner thread until `deadline`.
    private static func sleep(until deadline: ContinuousClock.Instant) {
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return }
            let (seconds, attoseconds) = left.components
            var wait = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
            _ = nanosleep(&wait, nil)
        }
    }

    /// Reads the socket once and delivers what it completed (owner thread, when the socket is readable).
    private func readSocket() {
        let started = ContinuousClock.now
        core.reads.wrappingAdd(1, ordering: .relaxed)
        var signals = 0
        var others = 0
        let (closed, filled) = reader.withLock { reader -> (String?, Bool) in
            let closed = reader?.read { message in
                if message.kind == .signal { signals += 1 } else { others += 1 }
                receive(message)
            }
            return (closed, reader?.filledLastRead ?? false)
        }
        state.withLock { state in
            state.lastRead = started
            state.lastReadOnlySignals = signals > 0 && others == 0 && !filled
        }
        endBatch()
        if let closed {
            core.recordCloseReason(closed)
            state.withLock { $0.disconnected = true }
        }
    }

    /// Tells the signal handlers that a run of messages ended (they wake their consumers once per run), at once
    /// or, within ``batchEndInterval`` of the last time, when that interval is over (owner thread).
    private func endBatch() {
        enum Decision {
            case now
            case at(ContinuousClock.Instant)
            case alreadyScheduled
        }
        let now = ContinuousClock.now
        let decision = state.withLock { state -> Decision in
            if now >= state.nextBatchEnd {
                state.nextBatchEnd = now + Self.batchEndInterval
                return .now
            }
            guard !state.batchEndScheduled else { return .alreadyScheduled }
            state.batchEndScheduled = true
            return .at(state.nextBatchEnd)
        }
        switch decision {
        case .now:
            core.signals.endOfBatch()
        case .at(let deadline):
            _ = loop.schedule(at: deadline) { [self] in
                state.withLock { state in
                    state.batchEndScheduled = false
                    state.nextBatchEnd = ContinuousClock.now + Self.batchEndInterval
                }
                core.signals.endOfBatch()
            }
        case .alreadyScheduled:
            break
        }
    }

    /// Called by the libdbus filter for every message libdbus read (owner thread, inside ``dispatch()``).
    func receive(_ raw: OpaquePointer) -> Bool {
        LibDBus.refMessage(raw)
        receive(DBusMessage(adopting: raw))
        return true
    }

    /// Delivers one incoming message: a reply to its caller, a signal to the router, a call to the object server.
    private func receive(_ message: DBusMessage) {
        switch message.kind {
        case .methodReturn, .error:
            let call = state.withLock { state -> PendingCall? in
                guard let call = state.pending.removeValue(forKey: message.replySerial) else { return nil }
                state.serials[call.id] = nil
                return call
            }
            guard let call else { return }
            loop.cancel(call.timer)
            if let error = message.error {
                call.continuation.resume(throwing: error)
            } else {
                call.continuation.resume(returning: message)
            }
        case .signal:
            if message.interface == "org.freedesktop.DBus.Local", message.member == "Disconnected" {
                state.withLock { $0.disconnected = true }
            } else {
                core.signals.route(message)
            }
        case .methodCall:
            core.objects.receive(message)
        }
    }

    private func afterIO() {
        scheduleDispatch()
        checkState()
    }

    // MARK: Teardown

    /// Resumes flush waiters once everything is written; tears down a lost connection once what it read is
    /// dispatched, and a closing one once its queue is written.
    private func checkState() {
        guard !state.withLock({ $0.finished }) else { return }
        let idle = !LibDBus.hasMessagesToSend(connection)
        let lost = !LibDBus.isConnected(connection)
        let (waiters, finish) = state.withLock { state -> ([@Sendable () -> Void], Bool) in
            guard !state.finished else { return ([], false) }
            let waiters = idle ? state.flushWaiters : []
            if idle { state.flushWaiters = [] }
            let finish = ((state.disconnected || lost) && !state.dispatchScheduled) || (state.closing && idle)
            return (waiters, finish)
        }
        for waiter in waiters { waiter() }
        if finish { teardown() }
    }

    /// Fails what is pending, releases the connection and stops the loop (the owner thread then ends).
    private func teardown() {
        let taken = state.withLock { state -> ([PendingCall], [@Sendable () -> Void])? in
            guard !state.finished else { return nil }
            state.finished = true
            defer {
                state.pending = [:]
                state.serials = [:]
                state.flushWaiters = []
            }
            return (Array(state.pending.values), state.flushWaiters)
        }
        guard let (pending, waiters) = taken else { return }
        let error = DBusError.disconnected()
        for command in core.mailbox.close() {
            switch command {
            case .call(let request): request.continuation.resume(throwing: error)
            case .flush(let waiter): waiter()
            case .send, .cancel, .close: break
            }
        }
        for call in pending {
            loop.cancel(call.timer)
            call.continuation.resume(throwing: error)
        }
        for waiter in waiters { waiter() }
        table.close()
        LibDBus.closeAndUnref(connection)
        core.signals.finishAll()
        core.objects.connectionClosed()
        core.markClosed()
        loop.stop()
    }
}

/// A weak reference that can be captured by a `@Sendable` closure.
final class WeakBox<T: AnyObject & Sendable>: Sendable {
    private let reference = Mutex<Weak>(Weak())

    private struct Weak {
        weak var value: T?
    }

    var value: T? {
        get { reference.withLock { $0.value } }
        set { reference.withLock { $0.value = newValue } }
    }
}
