import Glibc

/// The owner thread's loop: the only code that touches the libdbus connection after it is set up.
///
/// Each turn it runs the commands posted to the ``Mailbox`` (sending messages, registering calls under their reply
/// serial), dispatches what libdbus has read (replies resume their callers, signals go to the ``SignalRouter``,
/// method calls to the ``ObjectServer``), fails calls whose deadline passed, then sleeps in `poll(2)` on the
/// connection's watches and the wake-up pipe until the next event, timer or deadline. It never blocks on D-Bus:
/// every libdbus call made here reads or writes only what the socket takes without waiting.
final class EventLoop {
    private struct PendingCall {
        let id: UInt64
        let timeout: Duration
        let continuation: CheckedContinuation<DBusMessage, any Error>
    }

    /// How long a closing connection may spend writing what is still queued before it is dropped.
    private static let closeGrace = Duration.seconds(2)
    /// How many incoming messages are dispatched between two looks at the mailbox.
    private static let dispatchBudget = 256

    private let core: ConnectionCore
    private let connection: OpaquePointer
    private let registry: WatchRegistry
    private var pending: [UInt32: PendingCall] = [:]
    private var serials: [UInt64: UInt32] = [:]
    private var deadlines = DeadlineHeap()
    private var flushWaiters: [CheckedContinuation<Void, Never>] = []
    private var closeDeadline: ContinuousClock.Instant?
    private var disconnected = false

    init(core: ConnectionCore, connection: OpaquePointer) {
        self.core = core
        self.connection = connection
        registry = WatchRegistry(waker: core.mailbox.waker)
    }

    /// Installs the libdbus hooks; call on the owner thread before ``run()``.
    func installHooks() -> Bool {
        registry.adoptCurrentThread()
        return LoopHooks.install(on: connection, registry: registry, loop: self)
    }

    /// Runs until the connection is closed or lost, then fails what is pending and releases the connection.
    func run() {
        var fds: [pollfd] = []
        var handles: [UInt] = []
        while true {
            execute(core.mailbox.take())
            let moreToDispatch = dispatchSome()
            core.signals.endOfBatch()
            let idle = !LibDBus.hasMessagesToSend(connection)
            if idle { resumeFlushWaiters() }
            if disconnected || !LibDBus.isConnected(connection), !moreToDispatch { break }
            var now = ContinuousClock.now
            if let closeDeadline, idle || now >= closeDeadline { break }
            expireCalls(now: now)
            registry.pollSet(wakeFD: core.mailbox.waker.readFD, into: &fds, handles: &handles)
            let timeout = moreToDispatch ? 0 : pollTimeout(now: now)
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            if fds[0].revents != 0 { core.mailbox.waker.drain() }
            for index in fds.indices.dropFirst() where fds[index].revents != 0 {
                let handle = handles[index - 1]
                guard registry.isLive(handle), let watch = LoopHooks.pointer(handle) else { continue }
                LibDBus.handleWatch(watch, EventLoop.watchFlags(fds[index].revents))
            }
            now = .now
            for handle in registry.takeDueTimers(now: now) where registry.isTimerLive(handle) {
                if let timer = LoopHooks.pointer(handle) { LibDBus.handleTimeout(timer) }
            }
        }
        teardown()
    }

    // MARK: Commands

    private func execute(_ commands: [LoopCommand]) {
        for command in commands {
            switch command {
            case .send(let message):
                _ = message.withRaw { LibDBus.send(connection, $0) }
            case .call(let request):
                start(request)
            case .cancel(let id):
                guard let serial = serials.removeValue(forKey: id), let call = pending.removeValue(forKey: serial)
                else { continue }
                call.continuation.resume(throwing: CancellationError())
            case .flush(let waiter):
                flushWaiters.append(waiter)
            case .close:
                if closeDeadline == nil { closeDeadline = .now.advanced(by: EventLoop.closeGrace) }
            }
        }
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
        guard let serial = sent, pending[serial] == nil else {
            request.continuation.resume(
                throwing: DBusError(.invalidArgs, "the call could not be queued (a message can be called only once)"))
            return
        }
        pending[serial] = PendingCall(id: request.id, timeout: request.timeout, continuation: request.continuation)
        serials[request.id] = serial
        deadlines.insert(request.deadline, id: request.id)
    }

    // MARK: Incoming

    private func dispatchSome() -> Bool {
        for _ in 0..<EventLoop.dispatchBudget {
            if !LibDBus.dispatchOne(connection) { return false }
        }
        return true
    }

    /// Called by the libdbus filter for every incoming message (owner thread, inside ``dispatchSome()``).
    func receive(_ raw: OpaquePointer) -> Bool {
        LibDBus.refMessage(raw)
        let message = DBusMessage(adopting: raw)
        switch message.kind {
        case .methodReturn, .error:
            guard let call = pending.removeValue(forKey: message.replySerial) else { return true }
            serials[call.id] = nil
            if let error = message.error {
                call.continuation.resume(throwing: error)
            } else {
                call.continuation.resume(returning: message)
            }
        case .signal:
            if message.interface == "org.freedesktop.DBus.Local", message.member == "Disconnected" {
                disconnected = true
            } else {
                core.signals.route(message)
            }
        case .methodCall:
            core.objects.receive(message)
        }
        return true
    }

    // MARK: Time

    private func expireCalls(now: ContinuousClock.Instant) {
        while let id = deadlines.popExpired(now: now) {
            guard let serial = serials.removeValue(forKey: id), let call = pending.removeValue(forKey: serial)
            else { continue }
            call.continuation.resume(throwing: DBusError(.noReply, "no reply within \(call.timeout)"))
        }
        if deadlines.count > 2 * pending.count + 1024 {
            deadlines.compact { serials[$0] != nil }
        }
    }

    private func pollTimeout(now: ContinuousClock.Instant) -> Int32 {
        let candidates = [deadlines.earliest, registry.nextTimerDue, closeDeadline].compactMap { $0 }
        guard let due = candidates.min() else { return -1 }
        let wait = now.duration(to: due)
        if wait <= .zero { return 0 }
        let (seconds, attoseconds) = wait.components
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: milliseconds)
    }

    private static func watchFlags(_ revents: Int16) -> UInt32 {
        var flags: UInt32 = 0
        if revents & Int16(POLLIN) != 0 { flags |= LibDBus.watchReadable }
        if revents & Int16(POLLOUT) != 0 { flags |= LibDBus.watchWritable }
        if revents & Int16(POLLERR) != 0 { flags |= LibDBus.watchError }
        if revents & Int16(POLLHUP) != 0 { flags |= LibDBus.watchHangup }
        return flags
    }

    // MARK: Teardown

    private func resumeFlushWaiters() {
        guard !flushWaiters.isEmpty else { return }
        for waiter in flushWaiters { waiter.resume() }
        flushWaiters = []
    }

    private func teardown() {
        let error = DBusError.disconnected()
        for command in core.mailbox.close() {
            switch command {
            case .call(let request): request.continuation.resume(throwing: error)
            case .flush(let waiter): waiter.resume()
            case .send, .cancel, .close: break
            }
        }
        for call in pending.values { call.continuation.resume(throwing: error) }
        pending = [:]
        serials = [:]
        resumeFlushWaiters()
        LibDBus.closeAndUnref(connection)
        core.signals.finishAll()
        core.objects.connectionClosed()
        core.markClosed()
    }
}
