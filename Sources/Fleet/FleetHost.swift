import AgentCore
import ControlProtocol
import Glibc
import IO
import JSON
import RoleKit
import Synchronization

/// The agent's fleet side: runs a ``FleetService`` while the config has a
/// `fleet` section (replacing it when a reload changes the section, stopping
/// it when the section goes), and is the ``FleetPublisher`` every plugin
/// gets. The durable outbox outlives a service: it belongs to the state
/// directory (`<restore.stateDirectory>/fleet/outbox.log`).
public final class FleetHost: FleetPublisher {
    private struct Running: Sendable {
        var settings: AgentConfig.Fleet
        var stateDirectory: String
        var service: FleetService
    }

    private let agent: Agent
    private let registry: MethodRegistry
    private let bus: EventBus
    private let loop: EventLoop
    /// The outbox's appends and fsyncs and the config pushes' writes, in order, on the shared blocking pool.
    private let worker = BlockingQueue()
    private let configPath: String
    private let log: @Sendable (String) -> Void
    private let running = Mutex<Running?>(nil)
    /// The sensors plugins declared, and the role, for a service started later.
    private let sensors = Mutex<(list: [FleetSensor], role: String)?>(nil)
    /// Applies one config at a time, in order.
    private let tail = Mutex<Task<Void, Never>?>(nil)

    /// A host whose MQTT connection lives on `loop`; its blocking work (the
    /// outbox's fsyncs, config writes) runs on the shared blocking pool, its
    /// connecting (DNS and TCP connect) on a pool thread of its own.
    public init(
        agent: Agent, configPath: String, registry: MethodRegistry, bus: EventBus, loop: EventLoop,
        log: @escaping @Sendable (String) -> Void
    ) {
        self.agent = agent
        self.configPath = configPath
        self.registry = registry
        self.bus = bus
        self.loop = loop
        self.log = log
    }

    /// Registers `fleet.status`, the `fleet` section of `agent.status`, and
    /// follows the agent's reloads and stop.
    public func attach() throws(RegistrationError) {
        try registry.registerBuiltin("fleet.status", params: .none) { [weak self] _ in
            self?.statusJSON ?? ["enabled": false]
        }
        agent.addStatusSection("fleet") { [weak self] in self?.running.withLock { $0 }?.service.statusJSON }
        agent.observeReloads { [weak self] config in
            await self?.apply(config)
            self?.withdrawSensors(unlessDeclaredIn: config.role.rawValue)
        }
        agent.addStopHook { [weak self] in await self?.apply(nil) }
    }

    /// Makes `config`'s fleet section run (nil: stop). Returns once the
    /// outbox is open and the connection started (or the old one stopped).
    public func apply(_ config: AgentConfig?) async {
        let task = tail.withLock { tail in
            let previous = tail
            let task = Task {
                await previous?.value
                await self.transition(to: config)
            }
            tail = task
            return task
        }
        await task.value
    }

    private func transition(to config: AgentConfig?) async {
        let current = running.withLock { $0 }
        let wanted = config?.fleet
        let directory = config.map { "\($0.restore.stateDirectory)/fleet" }
        if let current, current.settings == wanted, current.stateDirectory == directory { return }
        if let current {
            await current.service.stop()
            running.withLock { $0 = nil }
        }
        guard let wanted, let directory else { return }
        // The same file keeps its one owner: reuse the outbox unless where or how it is kept changed.
        var outbox = current?.service.outbox
        if outbox == nil || current?.stateDirectory != directory || current?.settings.node != wanted.node
            || current?.settings.outbox != wanted.outbox
        {
            let fresh = DurableOutbox(
                directory: directory, node: wanted.node, limits: wanted.outbox, worker: worker,
                ready: { [weak self] in self?.outboxReady() })
            do {
                try await makeDirectory(directory)
                try await fresh.open()
            } catch {
                log("fleet: cannot open the outbox in \(directory): \(error); durable records are refused")
            }
            outbox = fresh
        }
        guard let outbox else { return }
        let service = FleetService(
            settings: wanted, configPath: configPath, outbox: outbox, agent: agent, registry: registry, bus: bus,
            loop: loop, worker: worker, devices: current?.service.devices, log: log)
        running.withLock { $0 = Running(settings: wanted, stateDirectory: directory, service: service) }
        service.start(connector: MQTTConnection.connectPool)
        if let (list, role) = sensors.withLock({ $0 }) { service.declareSensors(list, role: role) }
    }

    private func makeDirectory(_ path: String) async throws(FleetFileError) {
        let failure = await worker.run { () -> String? in
            var built = ""
            for component in path.split(separator: "/") {
                built += "/\(component)"
                if mkdir(built, 0o700) != 0 && errno != EEXIST {
                    return "mkdir \(built): \(String(cString: strerror(errno)))"
                }
            }
            return nil
        }
        if let failure { throw FleetFileError(description: failure) }
    }

    /// After a role switch: sensors declared in the other role are withdrawn
    /// (their Home Assistant entities removed). A plain stop keeps them: the
    /// node's status says it is offline.
    private func withdrawSensors(unlessDeclaredIn role: String) {
        guard let declared = sensors.withLock({ $0 }), declared.role != role else { return }
        sensors.withLock { $0 = nil }
        running.withLock { $0 }?.service.declareSensors([], role: declared.role)
    }

    private func outboxReady() {
        loop.execute { [weak self] in self?.running.withLock { $0 }?.service.outboxBecameReady() }
    }

    private var statusJSON: JSON {
        running.withLock { $0 }?.service.statusJSON ?? ["enabled": false]
    }

    // MARK: - FleetPublisher

    public var isEnabled: Bool { running.withLock { $0 } != nil }

    public func publishDurable(_ record: DurableRecord) async throws(DurablePublishError) {
        guard let service = running.withLock({ $0 })?.service else { return }
        try await service.outbox.store(record, at: FleetService.epochMilliseconds())
    }

    public func declareSensors(_ sensors: [FleetSensor]) {
        let role = agent.config.role.rawValue
        self.sensors.withLock { $0 = (sensors, role) }
        running.withLock { $0 }?.service.declareSensors(sensors, role: role)
    }

    public func publishReading(sensor: String, value: Double, time: Double) {
        running.withLock { $0 }?.service.publishReading(sensor: sensor, value: value, time: time)
    }

    public func publishDeviceReadings(_ device: FleetDevice, _ readings: [FleetDeviceReading]) {
        running.withLock { $0 }?.service.publishDeviceReadings(device, readings)
    }

    public func deviceUnavailable(_ device: String) {
        running.withLock { $0 }?.service.deviceUnavailable(device)
    }
}
