import AgentCore
import BLE
import ControlProtocol
import Glibc
import IO
import JSON
import RoleKit
import Synchronization

/// One fleet section at work: the MQTT connection and everything published
/// or obeyed over it (docs/fleet.md). All MQTT work happens on the loop;
/// publishers elsewhere (the event bus, plugins) only touch the bounded
/// queues under the lock and ask the loop to pump.
final class FleetService: Sendable {
    /// Durable records published and not yet acknowledged, at most.
    static let durableWindow = 32

    private struct State: Sendable {
        var connectedSince: Int64?
        var lastError: String?
        var lastErrorAt: Int64?
        var connections: Int64 = 0
        var inFlight: [Int32: Int64] = [:]
        var inFlightSeqs: Set<Int64> = []
        /// Records the broker refused (ACL): not sent again before the next connection.
        var held: Set<Int64> = []
        var events: EventQueue
        var eventsPublished: Int64 = 0
        var discovery = DiscoverySummary()
        var readings = ReadingFeed()
        var readingsPublished: Int64 = 0
        var devices: DeviceFeed
        var devicesPublished: Int64 = 0
        var sensors: [String: FleetSensor] = [:]
        var lastResult: JSON?
        var pumpRequested = false
        var statusRequested = false
        var refusedPublishes: Int64 = 0
        var timers: [String: EventLoop.Timer] = [:]
        var stopped = false
    }

    let settings: AgentConfig.Fleet
    let topics: FleetTopics
    let outbox: DurableOutbox
    private let agent: Agent
    private let bus: EventBus
    private let loop: EventLoop
    private let worker: BlockingQueue
    private let push: ConfigPush
    private let rpc: FleetRPC
    private let log: @Sendable (String) -> Void
    private let state: Mutex<State>
    private let connection = Mutex<MQTTConnection?>(nil)
    private let busToken = Mutex<EventBus.Token?>(nil)
    private let reloads = Mutex<Task<Void, Never>?>(nil)

    /// A service for `settings`; `devices` carries the relayed devices of the
    /// service it replaces (their configs and states are published again).
    init(
        settings: AgentConfig.Fleet, configPath: String, outbox: DurableOutbox, agent: Agent, registry: MethodRegistry,
        bus: EventBus, loop: EventLoop, worker: BlockingQueue, devices: DeviceFeed? = nil,
        log: @escaping @Sendable (String) -> Void
    ) {
        self.settings = settings
        self.topics = FleetTopics(prefix: settings.prefix)
        self.outbox = outbox
        self.agent = agent
        self.bus = bus
        self.loop = loop
        self.worker = worker
        self.push = ConfigPush(configPath: configPath)
        self.rpc = FleetRPC(registry: registry, topics: FleetTopics(prefix: settings.prefix)) { settings.allowsRPC($0) }
        self.log = log
        let feed =
            devices?.carried(announces: settings.homeAssistant.enabled)
            ?? DeviceFeed(announces: settings.homeAssistant.enabled)
        self.state = Mutex(State(events: EventQueue(limit: settings.events.queueLimit), devices: feed))
    }

    // MARK: - Life

    /// Connects and starts publishing.
    func start(connector: BlockingPool) {
        let offline: JSON = ["state": "offline", "node": .string(settings.node)]
        let mqtt = MQTTConnection(
            settings: MQTTConnection.Settings(
                broker: settings.broker, clientID: settings.clientID, protocolVersion: settings.protocolVersion,
                keepaliveSeconds: settings.keepaliveSeconds, credentialsFile: settings.credentialsFile,
                tls: settings.tls, will: (topics.status, Self.bytes(offline), settings.qos.status)),
            loop: loop, connector: connector,
            events: MQTTConnectionEvents(
                connected: { [weak self] in self?.connected() },
                disconnected: { [weak self] reason in self?.disconnected(reason) },
                acknowledged: { [weak self] mid, refusal in self?.acknowledged(mid, refusal) },
                message: { [weak self] message in self?.received(message) },
                subscriptionRefused: { [weak self] topic in
                    self?.note("the broker refused the subscription to \(topic)")
                },
                drained: { [weak self] in self?.pump() }))
        connection.withLock { $0 = mqtt }
        let kinds = settings.events.kinds
        let token = bus.observe(wants: { kinds.contains($0) }) { [weak self] event in self?.observe(event) }
        busToken.withLock { $0 = token }
        schedule("status", after: settings.statusSeconds) { $0.periodicStatus() }
        schedule("discovery", after: settings.events.discoverySeconds) { $0.periodicDiscovery() }
        log("fleet: node \(settings.node), broker \(settings.broker), prefix \(settings.prefix)")
        mqtt.start()
    }

    /// Publishes `offline` (retained), disconnects cleanly and stops; returns once done.
    func stop() async {
        if let token = busToken.withLock({ $0 }) { bus.remove(token) }
        let timers = state.withLock { state in
            defer {
                state.stopped = true
                state.timers = [:]
            }
            return state.timers.values
        }
        timers.forEach { loop.cancel($0) }
        let offline = Self.bytes(["state": "offline", "node": .string(settings.node)])
        let (mqtt, topic, qos) = (connection.withLock { $0 }, topics.status, settings.qos.status)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            loop.execute {
                if let mqtt {
                    _ = mqtt.publish(topic: topic, payload: offline, qos: qos, retain: true)
                    mqtt.stop()
                }
                done.resume()
            }
        }
    }

    /// Records were stored: deliver them (on the loop).
    func outboxBecameReady() { pump() }

    // MARK: - Connection events (loop)

    private func connected() {
        state.withLock { state in
            state.connectedSince = Self.epochMilliseconds()
            state.connections += 1
            state.held = []
            state.devices.reconnected()
        }
        guard let mqtt = connection.withLock({ $0 }) else { return }
        log("fleet: connected to \(settings.broker)")
        mqtt.subscribe(topics.rpc, qos: 1)
        if settings.acceptConfig { mqtt.subscribe(topics.configSet, qos: 1) }
        publishStatus()
        publishDiscoveryConfigs(Array(state.withLock { $0.sensors.values }))
        if let result = state.withLock({ $0.lastResult }) { publish(topics.configResult, result, retain: true) }
        pump()
    }

    private func disconnected(_ reason: String) {
        let wasConnected = state.withLock { state in
            defer {
                state.connectedSince = nil
                state.inFlight = [:]
                state.inFlightSeqs = []
            }
            return state.connectedSince != nil
        }
        note(reason)
        if wasConnected { log("fleet: \(reason); reconnecting") }
    }

    private func acknowledged(_ mid: Int32, _ refusal: String?) {
        let seq = state.withLock { state -> Int64? in
            guard let seq = state.inFlight.removeValue(forKey: mid) else { return nil }
            state.inFlightSeqs.remove(seq)
            if refusal != nil { state.held.insert(seq) }
            return seq
        }
        if let refusal {
            state.withLock { $0.refusedPublishes += 1 }
            note("the broker refused a publish: \(refusal)")
        } else if let seq {
            outbox.acknowledged(seq)
        }
        pump()
    }

    private func received(_ message: MQTTMessage) {
        if message.topic == topics.rpc {
            let correlation = message.correlationData
            rpc.handle(rpc.decode(message)) { [weak self] topic, response in
                guard let self else { return }
                loop.execute { self.publish(topic, response, retain: false, correlation: correlation) }
            }
        } else if message.topic == topics.configSet, settings.acceptConfig {
            receivedConfig(message.payload)
        }
    }

    // MARK: - Publishing (loop)

    /// Publishes what waits, durable records first, while the connection keeps up.
    private func pump() {
        state.withLock { $0.pumpRequested = false }
        guard let mqtt = connection.withLock({ $0 }), mqtt.isConnected else { return }
        let (room, excluded) = state.withLock { state in
            (Self.durableWindow - state.inFlight.count, state.inFlightSeqs.union(state.held))
        }
        if room > 0 {
            for entry in outbox.deliverable(limit: room, excluding: excluded) {
                guard
                    let mid = mqtt.publish(
                        topic: topics.durable(entry.stream), payload: entry.payload, qos: settings.qos.durable,
                        retain: false)
                else { return }
                state.withLock { state in
                    state.inFlight[mid] = entry.seq
                    state.inFlightSeqs.insert(entry.seq)
                }
            }
        }
        while !mqtt.isBacklogged {
            guard let next = state.withLock({ nextMessage(&$0) }) else { return }
            // Not taken (the connection just went): lost like any message of these streams, not counted as sent;
            // a reconnection publishes the relayed devices' states again.
            guard mqtt.publish(topic: next.topic, payload: next.payload, qos: next.qos, retain: next.retain) != nil
            else { return }
            state.withLock { state in
                switch next.stream {
                case .events: state.eventsPublished += 1
                case .readings: state.readingsPublished += 1
                case .devices: state.devicesPublished += 1
                }
            }
        }
    }

    private struct Outgoing {
        enum Stream { case events, readings, devices }
        var topic: String
        var payload: [UInt8]
        var qos: Int
        var retain = false
        var stream: Stream
    }

    /// The next message of the bounded streams: events, then the node's readings, then relayed devices.
    private func nextMessage(_ state: inout State) -> Outgoing? {
        if let event = state.events.pop() {
            return Outgoing(topic: event.topic, payload: event.payload, qos: settings.qos.events, stream: .events)
        }
        if let reading = state.readings.pop() {
            let payload = HomeAssistantDiscovery.reading(value: reading.value, time: reading.time)
            return Outgoing(
                topic: topics.sensor(reading.sensor), payload: Self.bytes(payload), qos: settings.qos.sensors,
                stream: .readings)
        }
        let qos = settings.qos.sensors
        switch state.devices.pop() {
        case nil:
            return nil
        case .announce(let device, let reading):
            let discovery = discovery()
            return Outgoing(
                topic: discovery.configTopic(device: device.id, reading: reading),
                payload: Self.bytes(discovery.config(device: device, reading: reading)), qos: qos, retain: true,
                stream: .devices)
        case .availability(let device, let online):
            return Outgoing(
                topic: topics.deviceAvailability(device), payload: Array((online ? "online" : "offline").utf8),
                qos: qos, retain: true, stream: .devices)
        case .reading(let device, let reading):
            return Outgoing(
                topic: topics.deviceReading(device, reading.id),
                payload: Self.bytes(HomeAssistantDiscovery.payload(reading)), qos: qos, retain: reading.isState,
                stream: .devices)
        }
    }

    /// Asks the loop to pump, once however many ask before it runs.
    private func requestPump() {
        let first = state.withLock { state -> Bool in
            defer { state.pumpRequested = true }
            return !state.pumpRequested
        }
        if first { loop.execute { [weak self] in self?.pump() } }
    }

    private func publish(_ topic: String, _ json: JSON, retain: Bool, correlation: [UInt8]? = nil) {
        guard let mqtt = connection.withLock({ $0 }) else { return }
        let payload = Self.bytes(json)
        _ = mqtt.publish(
            topic: topic, payload: payload, qos: retain ? settings.qos.status : settings.qos.replies, retain: retain,
            correlation: correlation)
    }

    private func publishStatus() {
        state.withLock { $0.statusRequested = false }
        let status: JSON = [
            "state": "online", "node": .string(settings.node), "at": .int(Self.epochMilliseconds()),
            "agent": agent.status(),
        ]
        publish(topics.status, status, retain: true)
    }

    private func periodicStatus() {
        publishStatus()
        schedule("status", after: settings.statusSeconds) { $0.periodicStatus() }
    }

    private func periodicDiscovery() {
        let summary = state.withLock { state -> JSON? in
            state.discovery.isEmpty ? nil : state.discovery.take(intervalSeconds: settings.events.discoverySeconds)
        }
        if let summary { enqueue(topic: topics.events("discovered"), summary) }
        schedule("discovery", after: settings.events.discoverySeconds) { $0.periodicDiscovery() }
    }

    /// Runs `job` in `seconds` (replacing the timer of the same name).
    private func schedule(_ name: String, after seconds: Int, _ job: @escaping @Sendable (FleetService) -> Void) {
        let timer = loop.schedule(after: .seconds(Int64(seconds))) { [weak self] in
            guard let self else { return }
            job(self)
        }
        let cancelNow = state.withLock { state -> Bool in
            if state.stopped { return true }
            state.timers[name] = timer
            return false
        }
        if cancelNow { loop.cancel(timer) }
    }

    // MARK: - Events (any thread)

    private func observe(_ event: AgentEvent) {
        guard settings.events.kinds.contains(event.kind) else { return }
        if event.kind == .discovered {
            state.withLock { $0.discovery.add(event.data) }
            return
        }
        enqueue(topic: topics.events(event.kind.rawValue), event.data)
        if event.kind == .state {
            let first = state.withLock { state -> Bool in
                defer { state.statusRequested = true }
                return !state.statusRequested
            }
            if first {
                _ = loop.schedule(after: .seconds(1)) { [weak self] in self?.publishStatus() }
            }
        }
    }

    private func enqueue(topic: String, _ data: JSON) {
        let message: JSON = ["node": .string(settings.node), "at": .int(Self.epochMilliseconds()), "data": data]
        state.withLock { $0.events.push(EventQueue.Message(topic: topic, payload: Self.bytes(message))) }
        requestPump()
    }

    // MARK: - Sensors (any thread)

    func declareSensors(_ sensors: [FleetSensor], role: String) {
        let (added, removed) = state.withLock { state -> ([FleetSensor], [String]) in
            let removed = state.sensors.keys.filter { id in !sensors.contains { $0.id == id } }
            state.sensors = Dictionary(sensors.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
            return (sensors, removed)
        }
        loop.execute { [weak self] in
            guard let self else { return }
            self.publishDiscoveryConfigs(added, role: role)
            guard settings.homeAssistant.enabled else { return }
            for id in removed {  // an empty retained config removes the entity from Home Assistant
                _ = connection.withLock({ $0 })?.publish(
                    topic: discovery(role: role).configTopic(id), payload: [], qos: settings.qos.sensors, retain: true)
            }
        }
    }

    func publishReading(sensor: String, value: Double, time: Double) {
        state.withLock { $0.readings.add(ReadingFeed.Reading(sensor: sensor, value: value, time: time)) }
        requestPump()
    }

    func publishDeviceReadings(_ device: FleetDevice, _ readings: [FleetDeviceReading]) {
        state.withLock { $0.devices.update(device, readings) }
        requestPump()
    }

    func deviceUnavailable(_ device: String) {
        state.withLock { $0.devices.unavailable(device) }
        requestPump()
    }

    /// The relayed devices, for the service that replaces this one.
    var devices: DeviceFeed { state.withLock { $0.devices } }

    private func discovery(role: String? = nil) -> HomeAssistantDiscovery {
        HomeAssistantDiscovery(
            discoveryPrefix: settings.homeAssistant.discoveryPrefix, node: settings.node, topics: topics,
            softwareVersion: Agent.version, role: role ?? agent.config.role.rawValue,
            nodeTopicLevel: settings.homeAssistant.nodeTopicLevel)
    }

    private func publishDiscoveryConfigs(_ sensors: [FleetSensor], role: String? = nil) {
        guard settings.homeAssistant.enabled, let mqtt = connection.withLock({ $0 }) else { return }
        let discovery = discovery(role: role)
        for sensor in sensors.sorted(by: { $0.id < $1.id }) {
            _ = mqtt.publish(
                topic: discovery.configTopic(sensor.id), payload: Self.bytes(discovery.config(for: sensor)),
                qos: settings.qos.sensors, retain: true)
        }
    }

    // MARK: - Config push

    private func receivedConfig(_ payload: [UInt8]) {
        let previous = reloads.withLock { $0 }
        let task = Task { [weak self] in
            await previous?.value
            await self?.apply(payload)
        }
        reloads.withLock { $0 = task }
    }

    private func apply(_ payload: [UInt8]) async {
        let digest = CRC32.hex(payload)
        let push = self.push
        let outcome: ConfigPush.Outcome
        switch push.validate(payload) {
        case .invalid(let issues):
            outcome = .rejected(issues)
        case .valid(let config):
            let written = await worker.run { () -> Result<Bool, SystemError> in
                if push.isInForce(payload) { return .success(false) }
                return Result { () throws(SystemError) in
                    try push.write(payload)
                    return true
                }
            }
            switch written {
            case .success(false): outcome = .unchanged
            case .failure(let error): outcome = .failed("cannot write the config: \(error)")
            case .success(true):
                log("fleet: a pushed config (crc32 \(digest)) was written to \(push.configPath); reloading")
                switch await agent.reload(trigger: "fleet") {
                case .success: outcome = .applied(role: config.role.rawValue)
                case .failure(let error): outcome = .rejected(error.issues)
                }
            }
        }
        if case .rejected(let issues) = outcome {
            log("fleet: pushed config (crc32 \(digest)) rejected: \(issues.map(\.description).joined(separator: "; "))")
        }
        let result = ConfigPush.resultJSON(outcome, digest: digest, at: Self.epochMilliseconds())
        state.withLock { $0.lastResult = result }
        let topic = topics.configResult
        loop.execute { [weak self] in self?.publish(topic, result, retain: true) }
    }

    // MARK: - Status

    private func note(_ error: String) {
        state.withLock { state in
            state.lastError = error
            state.lastErrorAt = Self.epochMilliseconds()
        }
    }

    /// `fleet.status` and the `fleet` section of `agent.status`.
    var statusJSON: JSON {
        let connected = connection.withLock { $0 }?.isConnected ?? false
        return state.withLock { state in
            [
                "enabled": true, "broker": .string(settings.broker.description), "node": .string(settings.node),
                "clientId": .string(settings.clientID), "prefix": .string(settings.prefix),
                "protocol": .string(settings.protocolVersion.rawValue), "connected": .bool(connected),
                "connectedSince": state.connectedSince.map(JSON.int) ?? .null,
                "connections": .int(state.connections),
                "lastError": state.lastError.map(JSON.string) ?? .null,
                "lastErrorAt": state.lastErrorAt.map(JSON.int) ?? .null,
                "outbox": outbox.statusJSON,
                "inFlight": .int(Int64(state.inFlight.count)),
                "refusedPublishes": .int(state.refusedPublishes),
                "events": [
                    "queued": .int(Int64(state.events.count)), "published": .int(state.eventsPublished),
                    "dropped": .int(state.events.dropped),
                ],
                "readings": [
                    "sensors": .int(Int64(state.sensors.count)), "queued": .int(Int64(state.readings.count)),
                    "published": .int(state.readingsPublished), "merged": .int(state.readings.merged),
                    "dropped": .int(state.readings.dropped),
                ],
                "devices": [
                    "tracked": .int(Int64(state.devices.count)), "waiting": .int(Int64(state.devices.waiting)),
                    "published": .int(state.devicesPublished), "merged": .int(state.devices.merged),
                    "dropped": .int(state.devices.devicesDropped),
                    "readingsDropped": .int(state.devices.readingsDropped),
                    "departed": .int(state.devices.departed),
                ],
                "rpc": rpc.statusJSON,
                "lastConfigPush": state.lastResult ?? .null,
            ]
        }
    }

    static func bytes(_ json: JSON) -> [UInt8] { Array(json.serialized(.compact).utf8) }

    static func epochMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
