import AgentCore
import IO
import Synchronization

/// What the connection reports to its owner, on the loop's thread.
struct MQTTConnectionEvents: Sendable {
    /// The broker accepted the connection (subscribe and publish now).
    var connected: @Sendable () -> Void
    /// The connection ended or an attempt failed; another follows after the backoff.
    var disconnected: @Sendable (_ reason: String) -> Void
    /// The broker acknowledged `mid` (QoS 1/2); `refused` when its MQTT 5 reason code says so.
    var acknowledged: @Sendable (_ mid: Int32, _ refusal: String?) -> Void
    /// A message on a subscribed topic.
    var message: @Sendable (MQTTMessage) -> Void
    /// The broker refused a subscription.
    var subscriptionRefused: @Sendable (_ topic: String) -> Void
    /// libmosquitto wrote everything it had queued: more may be published.
    var drained: @Sendable () -> Void
}

/// One MQTT connection kept up for as long as the fleet runs, driven from an
/// ``EventLoop``: the socket is watched for reading, and for writing while
/// libmosquitto has bytes queued; `loop_misc` runs once a second for
/// keepalive. Each attempt uses a fresh client (so nothing of a lost session
/// lingers in libmosquitto: what must be delivered again is the outbox's
/// business), connects on ``connectPool`` (DNS and TCP connect block), and
/// after a failure the next attempt waits for the ``Backoff``.
final class MQTTConnection: Sendable {
    struct Settings: Sendable {
        var broker: AgentConfig.Fleet.Broker
        var clientID: String
        var protocolVersion: AgentConfig.Fleet.ProtocolVersion
        var keepaliveSeconds: Int
        var credentialsFile: String?
        var tls: AgentConfig.Fleet.TLS
        var will: (topic: String, payload: [UInt8], qos: Int)
    }

    private enum Phase: Sendable {
        case idle, connecting, connected, stopped
    }

    private struct State: Sendable {
        var phase = Phase.idle
        var client: MosquittoClient?
        var registration: EventLoop.Registration?
        var watchingWrite = false
        var generation: UInt64 = 0
        var backoff = Backoff()
        var subscriptions: [Int32: String] = [:]
        var retry: EventLoop.Timer?
        var ticker: EventLoop.Timer?
    }

    /// Where connection attempts run: one thread of its own, since a DNS
    /// lookup or a TCP connect may block for minutes and must not hold a
    /// thread of the shared pool, which fsyncs journals. Its thread starts
    /// with the first attempt.
    static let connectPool = BlockingPool(threads: 1, name: "fleet-connect")

    private let settings: Settings
    private let loop: EventLoop
    private let connector: BlockingPool
    private let events: MQTTConnectionEvents
    private let state = Mutex(State())

    init(settings: Settings, loop: EventLoop, connector: BlockingPool, events: MQTTConnectionEvents) {
        self.settings = settings
        self.loop = loop
        self.connector = connector
        self.events = events
    }

    /// Whether the broker has accepted the current connection.
    var isConnected: Bool { state.withLock { $0.phase == .connected } }

    /// Whether libmosquitto still has bytes to write (then publish no more
    /// non-durable messages: the socket sets the pace).
    var isBacklogged: Bool { state.withLock { $0.client?.wantsWrite ?? false } }

    /// Starts connecting (on the loop).
    func start() {
        loop.execute { self.attempt() }
    }

    /// Disconnects cleanly (no Last Will) and stops reconnecting. Call on the loop.
    func stop() {
        let (client, registration, timers) = state.withLock { state in
            defer {
                state.phase = .stopped
                state.client = nil
                state.registration = nil
                state.retry = nil
                state.ticker = nil
            }
            return (state.client, state.registration, [state.retry, state.ticker].compactMap { $0 })
        }
        timers.forEach { loop.cancel($0) }
        guard let client else { return }
        client.disconnect()
        _ = client.loopWrite()
        if let registration { loop.deregister(registration) }
    }

    /// Publishes now if connected; the message id, or nil when not connected
    /// (or libmosquitto refused: the reason goes to `disconnected` if the link died).
    func publish(topic: String, payload: [UInt8], qos: Int, retain: Bool, correlation: [UInt8]? = nil) -> Int32? {
        guard let client = state.withLock({ $0.phase == .connected ? $0.client : nil }) else { return nil }
        do {
            let mid = try client.publish(
                topic: topic, payload: payload, qos: qos, retain: retain, correlation: correlation)
            updateWriteInterest()
            return mid
        } catch {
            if error.isConnectionLost { connectionLost("\(error)") }
            return nil
        }
    }

    /// Subscribes (once connected; call from `connected`).
    func subscribe(_ topic: String, qos: Int) {
        guard let client = state.withLock({ $0.phase == .connected ? $0.client : nil }) else { return }
        if let mid = try? client.subscribe(topic, qos: qos) {
            state.withLock { $0.subscriptions[mid] = topic }
            updateWriteInterest()
        }
    }

    // MARK: - Connecting

    private func attempt() {
        let generation = state.withLock { state -> UInt64? in
            guard state.phase == .idle else { return nil }
            state.phase = .connecting
            state.generation += 1
            state.retry = nil
            return state.generation
        }
        guard let generation else { return }
        let events = self.events
        let callbacks = MosquittoCallbacks(
            connected: { [weak self] reason in self?.connack(reason, generation) },
            disconnected: { [weak self] reason in
                self?.connectionLost(
                    reason == 0
                        ? "disconnected" : MosquittoError(code: reason, operation: "connection lost").description)
            },
            published: { mid, reason in
                events.acknowledged(mid, reason >= 0x80 ? MosquittoClient.reasonText(reason) : nil)
            },
            message: { message in events.message(message) },
            subscribed: { [weak self] mid, granted in self?.suback(mid, granted) })
        let settings = self.settings
        connector.submit { [self] in
            let outcome = Result { () throws(FleetConnectError) -> MosquittoClient in
                try Self.makeClient(settings, callbacks)
            }
            loop.execute { self.attached(outcome, generation) }
        }
    }

    /// On the connect pool's thread: a configured client that has started connecting.
    private static func makeClient(
        _ settings: Settings, _ callbacks: MosquittoCallbacks
    ) throws(FleetConnectError)
        -> MosquittoClient
    {
        do {
            let version: Int32 = settings.protocolVersion == .v5 ? 5 : 4
            let client = try MosquittoClient(
                clientID: settings.clientID, protocolVersion: version, callbacks: callbacks)
            try client.setWill(
                topic: settings.will.topic, payload: settings.will.payload, qos: settings.will.qos, retain: true)
            if let path = settings.credentialsFile {
                let credentials = try FleetCredentials.read(path)
                try client.setCredentials(username: credentials.username, password: credentials.password)
            }
            if settings.broker.usesTLS {
                try client.setTLS(
                    caFile: settings.tls.caFile, certificateFile: settings.tls.certificateFile,
                    keyFile: settings.tls.keyFile)
            }
            switch settings.broker {
            case .tcp(let host, let port, _):
                try client.connect(host: host, port: port, keepalive: settings.keepaliveSeconds)
            case .unix(let path): try client.connect(host: path, port: 0, keepalive: settings.keepaliveSeconds)
            }
            return client
        } catch let error as MosquittoError {
            throw FleetConnectError(description: error.description)
        } catch let error as FleetFileError {
            throw FleetConnectError(description: error.description)
        } catch {
            throw FleetConnectError(description: "\(error)")
        }
    }

    private func attached(_ outcome: Result<MosquittoClient, FleetConnectError>, _ generation: UInt64) {
        let current = state.withLock { $0.generation == generation && $0.phase == .connecting }
        guard current else { return }
        switch outcome {
        case .failure(let error):
            failed(error.description)
        case .success(let client):
            let fd = client.socket
            guard fd >= 0 else { return failed("no socket after connecting") }
            state.withLock { state in
                state.client = client
                state.watchingWrite = true
            }
            do {
                let registration = try loop.register(FileDescriptor(rawValue: fd), interest: [.readable, .writable]) {
                    [weak self] readiness in
                    // An error or a hang-up counts as readable: the read reports it.
                    let readable = !readiness.isDisjoint(with: [.readable, .hangUp, .error])
                    self?.service(readable: readable, writable: readiness.contains(.writable), generation)
                }
                state.withLock { $0.registration = registration }
            } catch {
                return failed("cannot watch the broker's socket: \(error)")
            }
            scheduleTick(generation)
        }
    }

    private func connack(_ reason: Int32, _ generation: UInt64) {
        guard reason == 0 else {
            return failed("the broker refused the connection: \(MosquittoClient.reasonText(reason))")
        }
        let accepted = state.withLock { state -> Bool in
            guard state.generation == generation, state.phase == .connecting else { return false }
            state.phase = .connected
            state.backoff.reset()
            return true
        }
        if accepted { events.connected() }
    }

    private func suback(_ mid: Int32, _ granted: [Int32]) {
        guard let topic = state.withLock({ $0.subscriptions.removeValue(forKey: mid) }) else { return }
        if granted.contains(where: { $0 >= 0x80 }) { events.subscriptionRefused(topic) }
    }

    // MARK: - Driving

    private func service(readable: Bool, writable: Bool, _ generation: UInt64) {
        guard let client = state.withLock({ $0.generation == generation ? $0.client : nil }) else { return }
        if readable {
            let code = client.loopRead()
            if code != 0 { return connectionLost(MosquittoError(code: code, operation: "read").description) }
        }
        if writable {
            let code = client.loopWrite()
            if code != 0 { return connectionLost(MosquittoError(code: code, operation: "write").description) }
        }
        updateWriteInterest()
    }

    private func updateWriteInterest() {
        let change = state.withLock { state -> (EventLoop.Registration, Bool)? in
            guard let client = state.client, let registration = state.registration else { return nil }
            let wants = client.wantsWrite
            guard wants != state.watchingWrite else { return nil }
            state.watchingWrite = wants
            return (registration, wants)
        }
        guard let (registration, wants) = change else { return }
        loop.setInterest(wants ? [.readable, .writable] : .readable, for: registration)
        if !wants { events.drained() }
    }

    private func scheduleTick(_ generation: UInt64) {
        let timer = loop.schedule(after: .seconds(1)) { [weak self] in self?.tick(generation) }
        state.withLock { $0.ticker = timer }
    }

    private func tick(_ generation: UInt64) {
        guard let client = state.withLock({ $0.generation == generation ? $0.client : nil }) else { return }
        let code = client.loopMisc()
        if code != 0 && code != 4 {  // 4: MOSQ_ERR_NO_CONN while CONNECT is in flight
            return connectionLost(MosquittoError(code: code, operation: "keepalive").description)
        }
        updateWriteInterest()
        scheduleTick(generation)
    }

    // MARK: - Losing it

    private func connectionLost(_ reason: String) { failed(reason) }

    private func failed(_ reason: String) {
        var random = SystemRandomNumberGenerator()
        let outcome = state.withLock {
            state -> (MosquittoClient?, EventLoop.Registration?, EventLoop.Timer?, Duration)? in
            guard state.phase == .connecting || state.phase == .connected else { return nil }
            defer {
                state.phase = .idle
                state.client = nil
                state.registration = nil
                state.ticker = nil
                state.subscriptions = [:]
                state.generation += 1
            }
            return (state.client, state.registration, state.ticker, state.backoff.next(using: &random))
        }
        guard let (client, registration, ticker, delay) = outcome else { return }
        if let ticker { loop.cancel(ticker) }
        if let registration { loop.deregister(registration) }
        withExtendedLifetime(client) {}
        events.disconnected(reason)
        let retry = loop.schedule(after: delay) { [weak self] in self?.attempt() }
        let stopped = state.withLock { state in
            if state.phase != .stopped { state.retry = retry }
            return state.phase == .stopped
        }
        if stopped { loop.cancel(retry) }
    }
}

/// A connection attempt failed before reaching the broker.
struct FleetConnectError: Error, Sendable, CustomStringConvertible {
    let description: String
}
