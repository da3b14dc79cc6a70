import CLinux
import ControlProtocol
import Glibc
import JSON
import Synchronization

/// The control API server: a Unix stream socket speaking JSON-RPC 2.0, one
/// message per line (docs/control-api.md).
///
/// All socket I/O happens on one ``EventLoop`` thread with non-blocking
/// sockets; handlers run as tasks and hand their replies back to the loop.
/// Events from the ``EventBus`` wait in a bounded ``EventBacklog`` that the
/// loop takes in batches (one job however many events arrive, so a flood of
/// events neither grows memory nor keeps the loop from the sockets), then in
/// a bounded ``ClientOutbox`` per subscribed client, so a client that stops
/// reading never stalls the agent.
public final class ControlServer: Sendable {
    struct Client {
        let fd: Int32
        let peer: PeerIdentity
        var framer: LineFramer
        var outbox: ClientOutbox
        var subscription: Set<EventKind>?
    }

    private struct State {
        var socket: SocketFile?
        var clients: [UInt64: Client] = [:]
        var nextClient: UInt64 = 0
        var policy: PeerPolicy
        var acceptPaused = false
        /// Refused connections are logged at most 5 a minute (a flood of them cannot flood the log).
        var refusalLog = LogRateLimit(burst: 5, window: .seconds(60))
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

    /// Creates the socket (see docs/control-api.md, "Security") and starts accepting.
    public func start() throws(ControlServerError) {
        let socket: SocketFile
        do {
            socket = try SocketFile.create(at: options.socketPath, mode: options.mode, group: options.group)
        } catch {
            throw ControlServerError(description: "cannot create the control socket: \(error)")
        }
        state.withLock { $0.socket = socket }
        loop.register(socket.fd, events: Int16(POLLIN)) { [weak self] _ in self?.acceptClients() }
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

    /// Flushes what each client can take now, closes every connection and
    /// the socket, and removes the socket file. Call on the loop's thread
    /// (or after the loop stopped).
    public func close() {
        if let token = busToken.withLock({ $0 }) { bus.remove(token) }
        let (socket, clients) = state.withLock { state in
            defer {
                state.socket = nil
                state.clients = [:]
            }
            return (state.socket, state.clients)
        }
        if let socket {
            loop.unregister(socket.fd)
            socket.remove()
        }
        for client in clients.values {
            var outbox = client.outbox
            while let bytes = outbox.nextBytes, let written = UnixSocket.writeSome(client.fd, bytes), written > 0 {
                outbox.didWrite(written)
            }
            loop.unregister(client.fd)
            Glibc.close(client.fd)
        }
    }

    // MARK: - Accepting

    private func acceptClients() {
        guard let listener = state.withLock({ $0.socket?.fd }) else { return }
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                if errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM {
                    // Out of descriptors: stop watching the listener (it would stay
                    // readable and spin the loop) until a client leaves.
                    state.withLock { $0.acceptPaused = true }
                    loop.update(listener, events: 0)
                }
                return
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            UnixSocket.setNonBlocking(fd)
            admit(fd)
        }
    }

    private func admit(_ fd: Int32) {
        guard let credentials = UnixSocket.peerCredentials(fd) else {
            Glibc.close(fd)
            return
        }
        let groups = UnixSocket.peerGroups(fd)
        let refusal: RPCError? = state.withLock { state in
            if !state.policy.allows(uid: credentials.uid, gid: credentials.gid, groups: groups) {
                let rule =
                    state.policy.operatorGroup == nil ? "control.allowedUids" : "control.allowedUids, control.group"
                return RPCError(.notAuthorized, "uid \(credentials.uid) is not allowed (\(rule))")
            }
            if state.clients.count >= options.maxClients {
                return RPCError(
                    .tooManyClients, "the agent already serves \(options.maxClients) clients; try again later")
            }
            return nil
        }
        if let refusal {
            logRefusal(refusal, uid: credentials.uid, pid: credentials.pid)
            _ = UnixSocket.writeSome(fd, Self.line(RPCMessage.error(id: .null, refusal))[...])
            Glibc.close(fd)
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
        loop.register(fd, events: Int16(POLLIN)) { [weak self] events in self?.service(id, events: events) }
    }

    /// Logs a refused connection at notice, within the rate limit.
    private func logRefusal(_ refusal: RPCError, uid: UInt32, pid: Int32) {
        guard let skipped = state.withLock({ $0.refusalLog.admit(at: .now) }) else { return }
        let note = skipped > 0 ? " (\(skipped) more refused connections were not logged)" : ""
        log.notice("refused a connection from uid \(uid) (pid \(pid)): \(refusal.message)\(note)")
    }

    // MARK: - Reading

    private func service(_ id: UInt64, events: Int16) {
        if events & Int16(POLLOUT) != 0 { flush(id) }
        if events & Int16(POLLIN | POLLHUP | POLLERR) != 0 { readFrom(id) }
    }

    private func readFrom(_ id: UInt64) {
        guard let fd = state.withLock({ $0.clients[id]?.fd }) else { return }
        var buffer = [UInt8](repeating: 0, count: 65536)
        // A bounded number of reads per wake-up keeps one busy client from starving the others.
        for _ in 0..<16 {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { return }
                disconnect(id)
                return
            }
            if count == 0 {
                disconnect(id)
                return
            }
            let frames = state.withLock { $0.clients[id]?.framer.append(buffer[..<count]) } ?? []
            for frame in frames {
                switch frame {
                case .oversized:
                    let error = RPCError(
                        .messageTooLarge,
                        "message longer than \(options.maxMessageBytes) bytes; the line was discarded")
                    send(RPCMessage.error(id: .null, error), to: id)
                case .line(let line):
                    handle(line, from: id)
                }
            }
        }
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
        guard let peer = state.withLock({ $0.clients[id]?.peer }) else { return }
        if let outcome = handleEventsMethod(call, client: id) {
            reply(call, outcome, to: id)
            return
        }
        guard registry.handler(for: call.method) != nil else {
            reply(call, .failure(RPCError(.methodNotFound, "method not found: \(call.method)")), to: id)
            return
        }
        let methodCall = MethodCall(method: call.method, params: call.params, peer: peer)
        let afterReply = methodCall.afterReply
        Task { [weak self, registry] in
            let outcome = await registry.call(methodCall)
            guard let self else { return }
            self.loop.execute {
                self.reply(call, outcome, to: id)
                afterReply.run()
            }
        }
    }

    private func reply(_ call: RPCCall, _ outcome: Result<JSON, RPCError>, to id: UInt64) {
        guard let replyID = call.id else { return }  // a notification gets no reply
        switch outcome {
        case .success(let result): send(RPCMessage.result(id: replyID, result), to: id)
        case .failure(let error): send(RPCMessage.error(id: replyID, error), to: id)
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
            state.withLock { $0.clients[id]?.subscription = kinds }
            return .success(["kinds": .array(kinds.sorted { $0.rawValue < $1.rawValue }.map { .string($0.rawValue) })])
        case "events.unsubscribe":
            if let refusal = EventFilter.unsubscribeRefusal(call.params) { return .failure(refusal) }
            let dropped = state.withLock { state -> Int64 in
                state.clients[id]?.subscription = nil
                return state.clients[id]?.outbox.droppedEvents ?? 0
            }
            return .success(["dropped": .int(dropped)])
        default:
            return nil
        }
    }

    /// Whether any client subscribed to events of `kind`.
    private func hasSubscriber(for kind: EventKind) -> Bool {
        state.withLock { state in state.clients.values.contains { $0.subscription?.contains(kind) == true } }
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
        let accepted = state.withLock { $0.clients[id]?.outbox.enqueueReply(Self.line(message)) } ?? true
        guard accepted else {
            disconnect(id)  // it sends requests but never reads the replies
            return
        }
        flush(id)
    }

    private func flush(_ id: UInt64) {
        while true {
            guard
                let (fd, bytes) = state.withLock({ state -> (Int32, ArraySlice<UInt8>?)? in
                    guard let client = state.clients[id] else { return nil }
                    return (client.fd, client.outbox.nextBytes)
                })
            else { return }
            guard let bytes else {
                loop.update(fd, events: Int16(POLLIN))
                return
            }
            guard let written = UnixSocket.writeSome(fd, bytes) else {
                disconnect(id)
                return
            }
            if written == 0 {
                loop.update(fd, events: Int16(POLLIN | POLLOUT))
                return
            }
            state.withLock { $0.clients[id]?.outbox.didWrite(written) }
        }
    }

    private func disconnect(_ id: UInt64) {
        let (removed, resumeListener) = state.withLock { state -> (Client?, Int32?) in
            let client = state.clients.removeValue(forKey: id)
            guard client != nil, state.acceptPaused else { return (client, nil) }
            state.acceptPaused = false
            return (client, state.socket?.fd)
        }
        guard let client = removed else { return }
        loop.unregister(client.fd)
        Glibc.close(client.fd)
        if let resumeListener { loop.update(resumeListener, events: Int16(POLLIN)) }
    }

    static func line(_ message: JSON) -> [UInt8] {
        Array(message.serialized(.compact).utf8) + [UInt8(ascii: "\n")]
    }
}

/// The control server could not start.
public struct ControlServerError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public let description: String
}
