import ControlProtocol
import IO
import JSON
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The control API server: a Unix stream socket speaking JSON-RPC 2.0, one
/// message per line (docs/control-api.md).
///
/// All socket I/O happens on one ``EventLoop`` with non-blocking sockets;
/// handlers run as tasks and hand their replies back to the loop. Work per
/// client is bounded (docs/control-api.md, "Limits"): at most
/// `maxRequestsInFlight` handlers run for one client; past it the server
/// stops reading that client's socket until one finishes, so further lines
/// wait in the socket (backpressure, not memory). A client that leaves a
/// line unfinished for `partialLineTimeout` is told and closed. Events from
/// the ``EventBus`` wait in a bounded ``EventBacklog`` that the loop takes in
/// batches (one job however many events arrive, so a flood of events neither
/// grows memory nor keeps the loop from the sockets), then in a bounded
/// ``ClientOutbox`` per subscribed client, so a client that stops reading
/// never stalls the agent.
public final class ControlServer: Sendable {
    struct Client {
        let fd: FileDescriptor
        let peer: PeerIdentity
        var registration: EventLoop.Registration?
        var framer: LineFramer
        var outbox: ClientOutbox
        var subscription: Set<EventKind>?
        /// Handlers running for this client.
        var inFlight = 0
        /// Complete lines read while the cap was reached: at most what one read brought in.
        var waiting: [[UInt8]] = []
        /// Whether the socket's readability is ignored (the cap is reached).
        var paused = false
        /// Whether the outbox waits for room in the socket.
        var blockedOnWrite = false
        /// When the unfinished line last grew, while there is one.
        var partialSince: ContinuousClock.Instant?
        var idleTimer: EventLoop.Timer?

        var interest: EventLoop.Interest {
            var interest: EventLoop.Interest = paused ? [] : .readable
            if blockedOnWrite { interest.insert(.writable) }
            return interest
        }
    }

    private struct State {
        var socket: SocketFile?
        var listener: EventLoop.Registration?
        var clients: [UInt64: Client] = [:]
        var nextClient: UInt64 = 0
        var policy: PeerPolicy
        var acceptPaused = false
        /// `requestsInFlight` and `pausedClients` are kept as the clients change, so reading them costs the same
        /// however many clients there are (`clients` is the table's count, filled in when read).
        var counters = ControlServerCounters()
        /// How many clients subscribed to each kind of event.
        var subscribers: [EventKind: Int] = [:]
        /// Refused connections are logged at most 5 a minute (a flood of them cannot flood the log).
        var refusalLog = LogRateLimit(burst: 5, window: .seconds(60))

        /// Runs `body` on client `id` where it is stored (reading or changing a field copies nothing else of the
        /// client); nil when there is no such client.
        mutating func withClient<R>(_ id: UInt64, _ body: (inout Client) -> R) -> R? {
            guard let index = clients.index(forKey: id) else { return nil }
            return body(&clients.values[index])
        }

        /// Replaces client `id`'s subscription with `kinds` (nil: none), keeping ``subscribers`` in step.
        mutating func subscribe(_ id: UInt64, to kinds: Set<EventKind>?) {
            guard clients[id] != nil else { return }
            for kind in clients[id]?.subscription ?? [] {
                let remaining = subscribers[kind, default: 0] - 1
                subscribers[kind] = remaining > 0 ? remaining : nil
            }
            for kind in kinds ?? [] { subscribers[kind, default: 0] += 1 }
            clients[id]?.subscription = kinds
        }
    }

    /// The settings the server was created with.
    public let options: ControlServerOptions
    private let loop: EventLoop
    private let registry: MethodRegistry
    private let bus: EventBus
    private let state: Mutex<State>
    private let busToken = Mutex<EventBus.Token?>(nil)
    /// The published events the loop has not taken yet, and whether a job to take them is queued.
    private let backlog: Mutex<(events: EventBacklog, scheduled: Bool)>
    private let log: AgentLog
    /// What each read of a client's socket goes into: used only on the loop's thread, one read at a time.
    nonisolated(unsafe) private let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 1)

    /// A server that dispatches to `registry` and forwards `bus` events,
    /// logging refused connections to `log`; call ``start()``.
    public init(
        options: ControlServerOptions, loop: EventLoop, registry: MethodRegistry, bus: EventBus,
        log: AgentLog = .discard
    ) {
        self.log = log
        self.options = options
        self.loop = loop
        self.registry = registry
        self.bus = bus
        self.state = Mutex(State(policy: options.policy))
        self.backlog = Mutex((EventBacklog(capacity: options.maxPendingEvents), false))
    }

    deinit {
        readBuffer.deallocate()
    }

    /// Creates the socket (see docs/control-api.md, "Security") and starts accepting.
    public func start() throws(ControlServerError) {
        let socket: SocketFile
        do {
            socket = try SocketFile.create(at: options.socketPath, mode: options.mode, group: options.group)
        } catch {
            throw ControlServerError(description: "cannot create the control socket: \(error)")
        }
        let listener: EventLoop.Registration
        do {
            listener = try loop.register(FileDescriptor(rawValue: socket.fd), interest: .readable) { [weak self] _ in
                self?.acceptClients()
            }
        } catch {
            socket.remove()
            throw ControlServerError(description: "cannot watch the control socket: \(error)")
        }
        state.withLock {
            $0.socket = socket
            $0.listener = listener
        }
        let token = bus.observe(wants: { [weak self] kind in self?.hasSubscriber(for: kind) ?? false }) {
            [weak self] event in
            self?.enqueue(event)
        }
        busToken.withLock { $0 = token }
    }

    /// Replaces who may connect (on reload); connected clients stay.
    public func setPolicy(_ policy: PeerPolicy) {
        state.withLock { $0.policy = policy }
    }

    /// The number of connected clients.
    public var clientCount: Int { state.withLock { $0.clients.count } }

    /// What the bounds have seen since the server started.
    public var counters: ControlServerCounters {
        state.withLock { state in
            var counters = state.counters
            counters.clients = state.clients.count
            return counters
        }
    }

    /// Flushes what each client can take now, closes every connection and
    /// the socket, and removes the socket file. Call on the loop's thread
    /// (or after the loop stopped).
    public func close() {
        if let token = busToken.withLock({ $0 }) { bus.remove(token) }
        let (socket, listener, clients) = state.withLock { state in
            defer {
                state.socket = nil
                state.listener = nil
                state.clients = [:]
                state.subscribers = [:]
                state.counters.requestsInFlight = 0
                state.counters.pausedClients = 0
            }
            return (state.socket, state.listener, state.clients)
        }
        if let listener { loop.deregister(listener) }
        socket?.remove()
        for client in clients.values {
            var outbox = client.outbox
            while let bytes = outbox.nextBytes, case .done(let written)? = Self.send(bytes, to: client.fd), written > 0
            {
                outbox.didWrite(written)
            }
            release(client)
        }
    }

    // MARK: - Accepting

    private func acceptClients() {
        guard let listener = state.withLock({ $0.socket?.fd }) else { return }
        while true {
            let accepted: FileDescriptor?
            do {
                accepted = try FileDescriptor(rawValue: listener).accept()
            } catch {
                if [.tooManyOpenFiles, .tooManyOpenFilesInSystem, .noBufferSpace, .noMemory].contains(error.errno) {
                    // Out of descriptors: stop watching the listener (it would stay
                    // readable and spin the loop) until a client leaves.
                    let registration = state.withLock { state in
                        state.acceptPaused = true
                        return state.listener
                    }
                    if let registration { loop.setInterest([], for: registration) }
                }
                return
            }
            guard let accepted else { return }
            admit(accepted)
        }
    }

    private func admit(_ fd: FileDescriptor) {
        guard let credentials = try? fd.peerCredentials() else {
            fd.close()
            return
        }
        let groups = fd.peerGroups()
        let refusal: RPCError? = state.withLock { state in
            if !state.policy.allows(uid: credentials.uid, gid: credentials.gid, groups: groups) {
                let rule =
                    state.policy.operatorGroup == nil ? "control.allowedUids" : "control.allowedUids, control.group"
                return RPCError(.notAuthorized, "uid \(credentials.uid) is not allowed (\(rule))")
            }
            if state.clients.count >= options.maxClients {
                state.counters.refusedClients += 1
                return RPCError(
                    .tooManyClients, "the agent already serves \(options.maxClients) clients; try again later")
            }
            return nil
        }
        if let refusal {
            logRefusal(refusal, uid: credentials.uid, pid: credentials.pid)
            _ = Self.send(Self.line(RPCMessage.error(id: .null, refusal))[...], to: fd)
            fd.close()
            return
        }
        let id = state.withLock { state in
            state.nextClient += 1
            let peer = PeerIdentity(client: state.nextClient, pid: credentials.pid, uid: credentials.uid)
            state.clients[state.nextClient] = Client(
                fd: fd, peer: peer, framer: LineFramer(maxLineBytes: options.maxMessageBytes),
                outbox: ClientOutbox(maxEvents: options.maxQueuedEvents, maxReplyBytes: options.maxQueuedReplyBytes),
                subscription: nil)
            return state.nextClient
        }
        do {
            let registration = try loop.register(fd, interest: .readable) { [weak self] readiness in
                self?.service(id, readiness)
            }
            state.withLock { $0.clients[id]?.registration = registration }
        } catch {
            disconnect(id)
        }
    }

    /// Logs a refused connection at notice, within the rate limit.
    private func logRefusal(_ refusal: RPCError, uid: UInt32, pid: Int32) {
        guard let skipped = state.withLock({ $0.refusalLog.admit(at: .now) }) else { return }
        let note = skipped > 0 ? " (\(skipped) more refused connections were not logged)" : ""
        log.notice("refused a connection from uid \(uid) (pid \(pid)): \(refusal.message)\(note)")
    }

    // MARK: - Reading

    private func service(_ id: UInt64, _ readiness: EventLoop.Readiness) {
        if readiness.contains(.writable) { flush(id) }
        guard let paused = state.withLock({ $0.withClient(id) { $0.paused } }) else { return }
        if paused {
            // Not reading: a hang-up or an error means the peer is gone, and level-triggered it would come back.
            if !readiness.isDisjoint(with: [.hangUp, .error]) { disconnect(id) }
            return
        }
        if !readiness.isDisjoint(with: [.readable, .hangUp, .error]) { readFrom(id) }
    }

    private func readFrom(_ id: UInt64) {
        guard let fd = state.withLock({ $0.withClient(id) { $0.fd } }) else { return }
        // A bounded number of reads per wake-up keeps one busy client from starving the others.
        for _ in 0..<16 {
            let received = Result { () throws(SystemError) in try fd.receive(into: readBuffer) }
            guard case .success(let transfer) = received, transfer != .done(0) else {
                disconnect(id)
                return
            }
            guard case .done(let count) = transfer else { return }  // would block
            let (frames, armTimer) =
                state.withLock { state in
                    state.withClient(id) { client -> ([LineFramer.Frame], Bool) in
                        let frames = client.framer.append(readBuffer[..<count])
                        return (frames, Self.notePartialLine(in: &client))
                    }
                } ?? ([], false)
            if armTimer { armIdleTimer(id, at: .now.advanced(by: options.partialLineTimeout)) }
            for frame in frames {
                switch frame {
                case .oversized:
                    let error = RPCError(
                        .messageTooLarge,
                        "message longer than \(options.maxMessageBytes) bytes; the line was discarded")
                    send(RPCMessage.error(id: .null, error), to: id)
                case .line(let line):
                    startOrHold(line, from: id)
                }
            }
            if state.withLock({ $0.withClient(id) { $0.paused } ?? true }) { return }
        }
    }

    /// Handles `line` now, or keeps it (and stops reading) while the client has its most requests running.
    private func startOrHold(_ line: [UInt8], from id: UInt64) {
        typealias Outcome = (start: Bool, pausing: Bool, registration: EventLoop.Registration?, EventLoop.Interest)
        let (start, pausing, registration, interest) = state.withLock { state -> Outcome in
            let outcome = state.withClient(id) { client -> Outcome in
                if client.inFlight < options.maxRequestsInFlight && client.waiting.isEmpty {
                    return (true, false, nil, [])
                }
                client.waiting.append(line)
                let pausing = !client.paused
                client.paused = true
                return (false, pausing, client.registration, client.interest)
            }
            guard let outcome, outcome.pausing else { return outcome ?? (false, false, nil, []) }
            state.counters.pausedReads += 1
            state.counters.pausedClients += 1
            return outcome
        }
        if pausing, let registration { loop.setInterest(interest, for: registration) }
        if start { handle(line, from: id) }
    }

    private func handle(_ line: [UInt8], from id: UInt64) {
        switch RequestDecoder.decode(line) {
        case .reject(let replyID, let error):
            send(RPCMessage.error(id: replyID, error), to: id)
        case .call(let call):
            dispatch(call, from: id)
        }
    }

    private func dispatch(_ call: RPCCall, from id: UInt64) {
        guard let peer = state.withLock({ $0.withClient(id) { $0.peer } }) else { return }
        if let outcome = handleEventsMethod(call, client: id) {
            reply(call, outcome, to: id)
            return
        }
        let methodCall = MethodCall(method: call.method, params: call.params, peer: peer)
        let afterReply = methodCall.afterReply
        if let outcome = registry.callImmediately(methodCall) {
            reply(call, outcome, to: id)
            afterReply.run()
            return
        }
        guard registry.handler(for: call.method) != nil else {
            reply(call, .failure(RPCError(.methodNotFound, "method not found: \(call.method)")), to: id)
            return
        }
        state.withLock { state in
            guard state.clients[id] != nil else { return }
            state.clients[id]?.inFlight += 1
            state.counters.requestsInFlight += 1
        }
        Task { [weak self, registry] in
            let outcome = await registry.call(methodCall)
            guard let self else { return }
            self.loop.execute {
                // Its slot is free before the reply goes out: a client that saw the reply sees the count without it.
                self.state.withLock { state in
                    if let inFlight = state.clients[id]?.inFlight, inFlight > 0 {
                        state.clients[id]?.inFlight = inFlight - 1
                        state.counters.requestsInFlight -= 1
                    }
                }
                self.reply(call, outcome, to: id)
                afterReply.run()
                self.resumeHeld(id)
            }
        }
    }

    /// A handler of client `id` finished: start held lines while below the cap, then read the socket again.
    private func resumeHeld(_ id: UInt64) {
        while true {
            let (next, registration, interest) = state.withLock {
                state -> ([UInt8]?, EventLoop.Registration?, EventLoop.Interest) in
                guard var client = state.clients[id], client.inFlight < options.maxRequestsInFlight else {
                    return (nil, nil, [])
                }
                defer { state.clients[id] = client }
                if !client.waiting.isEmpty { return (client.waiting.removeFirst(), nil, []) }
                guard client.paused else { return (nil, nil, []) }
                client.paused = false
                state.counters.pausedClients -= 1
                return (nil, client.registration, client.interest)
            }
            if let registration { loop.setInterest(interest, for: registration) }
            guard let next else { return }
            handle(next, from: id)
        }
    }

    private func reply(_ call: RPCCall, _ outcome: Result<JSON, RPCError>, to id: UInt64) {
        guard let replyID = call.id else { return }  // a notification gets no reply
        switch outcome {
        case .success(let result): send(RPCMessage.result(id: replyID, result), to: id)
        case .failure(let error): send(RPCMessage.error(id: replyID, error), to: id)
        }
    }

    // MARK: - Unfinished lines

    /// Notes whether `client` has an unfinished line after a read; true when its idle timer is to be armed.
    private static func notePartialLine(in client: inout Client) -> Bool {
        guard client.framer.hasPartialLine else {
            client.partialSince = nil
            return false
        }
        client.partialSince = .now
        return client.idleTimer == nil
    }

    private func armIdleTimer(_ id: UInt64, at deadline: ContinuousClock.Instant) {
        let timer = loop.schedule(at: deadline) { [weak self] in self?.idleTimerFired(id) }
        let kept = state.withLock { state -> Bool in
            guard state.clients[id] != nil else { return false }
            state.clients[id]?.idleTimer = timer
            return true
        }
        if !kept { loop.cancel(timer) }
    }

    private enum IdleVerdict {
        case nothing
        case rearm(ContinuousClock.Instant)
        case close
    }

    private func idleTimerFired(_ id: UInt64) {
        let verdict = state.withLock { state -> IdleVerdict in
            guard state.clients[id] != nil else { return .nothing }
            state.clients[id]?.idleTimer = nil
            guard let since = state.clients[id]?.partialSince else { return .nothing }
            let due = since.advanced(by: options.partialLineTimeout)
            if due > .now { return .rearm(due) }
            state.counters.idleClosed += 1
            return .close
        }
        switch verdict {
        case .nothing: return
        case .rearm(let due): armIdleTimer(id, at: due)
        case .close:
            let seconds = options.partialLineTimeout.components.seconds
            send(
                RPCMessage.error(
                    id: .null,
                    RPCError(.clientTooSlow, "a line was left unfinished for \(seconds) s; closing the connection")),
                to: id)
            disconnect(id)
        }
    }

    // MARK: - events.*

    private func handleEventsMethod(_ call: RPCCall, client id: UInt64) -> Result<JSON, RPCError>? {
        switch call.method {
        case "events.subscribe":
            let kinds: Set<EventKind>
            switch EventFilter.kinds(from: call.params) {
            case .success(let parsed): kinds = parsed
            case .failure(let error): return .failure(error)
            }
            state.withLock { $0.subscribe(id, to: kinds) }
            return .success(["kinds": .array(kinds.sorted { $0.rawValue < $1.rawValue }.map { .string($0.rawValue) })])
        case "events.unsubscribe":
            if let refusal = EventFilter.unsubscribeRefusal(call.params) { return .failure(refusal) }
            let dropped = state.withLock { state -> Int64 in
                state.subscribe(id, to: nil)
                return state.clients[id]?.outbox.droppedEvents ?? 0
            }
            return .success(["dropped": .int(dropped)])
        default:
            return nil
        }
    }

    /// Whether any client subscribed to events of `kind`.
    private func hasSubscriber(for kind: EventKind) -> Bool {
        state.withLock { $0.subscribers[kind, default: 0] > 0 }
    }

    /// The events dropped from the backlog since the server started (it overflowed while the loop was behind).
    public var backlogDrops: Int64 { backlog.withLock { $0.events.droppedTotal } }

    /// Adds a published event to the backlog; queues the job that takes it unless one is queued.
    private func enqueue(_ event: AgentEvent) {
        let schedule = backlog.withLock { backlog -> Bool in
            backlog.events.append(event)
            defer { backlog.scheduled = true }
            return !backlog.scheduled
        }
        if schedule { loop.execute { [weak self] in self?.broadcastBacklog() } }
    }

    /// Takes the backlog and queues its events (and its drops) for the subscribed clients.
    private func broadcastBacklog() {
        let (events, dropped) = backlog.withLock { backlog in
            backlog.scheduled = false
            return backlog.events.take()
        }
        let lines = events.map { (kind: $0.kind, line: EventLine($0)) }
        let ready = state.withLock { state -> [UInt64] in
            var ready: [UInt64] = []
            // By id, never while iterating the dictionary itself: a client changed during that
            // iteration would copy the whole table (every client's queue) once per change.
            for id in Array(state.clients.keys) {
                guard let kinds = state.clients[id]?.subscription else { continue }
                let missed = kinds.reduce(Int64(0)) { $0 + (dropped[$1] ?? 0) }
                if missed > 0 { state.clients[id]?.outbox.recordDropped(missed) }
                var queued = false
                for (kind, line) in lines where kinds.contains(kind) {
                    state.clients[id]?.outbox.enqueueEvent { line.bytes(sequence: $0, dropped: $1) }
                    queued = true
                }
                if queued { ready.append(id) }
            }
            return ready
        }
        for id in ready { flush(id) }
    }

    // MARK: - Writing

    private func send(_ message: JSON, to id: UInt64) {
        let line = Self.line(message)
        let accepted = state.withLock { $0.withClient(id) { $0.outbox.enqueueReply(line) } } ?? true
        guard accepted else {
            disconnect(id)  // it sends requests but never reads the replies
            return
        }
        flush(id)
    }

    private func flush(_ id: UInt64) {
        while true {
            guard
                let (fd, bytes) = state.withLock({ state in
                    state.withClient(id) { client -> (FileDescriptor, ArraySlice<UInt8>?) in
                        (client.fd, client.outbox.nextBytes)
                    }
                })
            else { return }
            guard let bytes else {
                setBlockedOnWrite(id, false)
                return
            }
            switch Self.send(bytes, to: fd) {
            case nil:
                disconnect(id)
                return
            case .wouldBlock?:
                setBlockedOnWrite(id, true)
                return
            case .done(let written)?:
                state.withLock { _ = $0.withClient(id) { $0.outbox.didWrite(written) } }
            }
        }
    }

    private func setBlockedOnWrite(_ id: UInt64, _ blocked: Bool) {
        let change = state.withLock { state in
            state.withClient(id) { client -> (EventLoop.Registration, EventLoop.Interest)? in
                guard client.blockedOnWrite != blocked else { return nil }
                client.blockedOnWrite = blocked
                return client.registration.map { ($0, client.interest) }
            } ?? nil
        }
        if let (registration, interest) = change { loop.setInterest(interest, for: registration) }
    }

    private func disconnect(_ id: UInt64) {
        let (removed, resumeListener) = state.withLock { state -> (Client?, EventLoop.Registration?) in
            state.subscribe(id, to: nil)
            guard let client = state.clients.removeValue(forKey: id) else { return (nil, nil) }
            state.counters.requestsInFlight -= client.inFlight
            if client.paused { state.counters.pausedClients -= 1 }
            guard state.acceptPaused else { return (client, nil) }
            state.acceptPaused = false
            return (client, state.listener)
        }
        guard let client = removed else { return }
        release(client)
        if let resumeListener { loop.setInterest(.readable, for: resumeListener) }
    }

    private func release(_ client: Client) {
        if let registration = client.registration { loop.deregister(registration) }
        if let timer = client.idleTimer { loop.cancel(timer) }
        client.fd.close()
    }

    /// Writes what the socket takes now: the count, `.wouldBlock`, or `nil` when the peer is gone.
    private static func send(_ bytes: ArraySlice<UInt8>, to fd: FileDescriptor) -> FileDescriptor.Transfer? {
        try? bytes.withUnsafeBytes { raw in try fd.send(raw) }
    }

    static func line(_ message: JSON) -> [UInt8] {
        message.serializedLine()
    }
}

/// What the control server's bounds have seen (shown by `agent.status` under `limits.control`).
public struct ControlServerCounters: Sendable, Hashable {
    /// Clients connected now.
    public var clients = 0
    /// Handlers running now, over all clients.
    public var requestsInFlight = 0
    /// Clients whose socket is not read now (their most requests run).
    public var pausedClients = 0
    /// Times a client's socket stopped being read because it had its most requests running.
    public var pausedReads = 0
    /// Connections closed because a line stayed unfinished past the timeout.
    public var idleClosed = 0
    /// Connections refused because the most clients were connected.
    public var refusedClients = 0
}

/// The control server could not start.
public struct ControlServerError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public let description: String
}
