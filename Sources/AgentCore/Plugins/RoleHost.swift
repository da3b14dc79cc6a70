import BLE
import Glibc
import IO
import JSON
import RoleKit
import Synchronization

/// Runs the configured role's plugin: loads it, gives it its context, starts
/// it, stops it, and on reload switches central <-> peripheral or restarts it
/// with a new config, without restarting the process. Transitions run one at
/// a time, in the order they were asked for. A plugin that fails leaves the
/// host in ``RolePhase/failed`` with the reason; the agent lives on.
///
/// When the running role's backend is lost (its bus connection closed under
/// it, the simulator exited), the host stops the plugin, reports the role
/// failed with the reason, and starts it again after a pause that doubles
/// from 1 s up to 30 s while starting keeps failing. A reload or a stop ends
/// the retries.
///
/// Every phase change is logged and published as a `state` event with
/// `agentState: "role"` (docs/control-api.md).
public final class RoleHost: Sendable {
    /// Deadlines for a plugin's start and stop.
    public struct Options: Sendable {
        /// How long `start()` may take before the role is reported failed.
        public var startDeadline: Duration = .seconds(10)
        /// How long `stop()` may take before the host proceeds without it.
        public var stopDeadline: Duration = .seconds(10)

        /// The defaults: 10 s each.
        public init() {}
    }

    /// What a running plugin was started from; a reload restarts the plugin
    /// only when this changes (or the role failed).
    struct Spec: Sendable, Hashable {
        var role: AgentConfig.Role
        var settings: AgentConfig.RoleSettings
        var pluginDirectory: String
        var stateDirectory: String
        var backend: AgentConfig.Backend
        var adapter: String
        var restore: AgentConfig.Restore
        var sim: AgentConfig.Sim
        var bluez: AgentConfig.BlueZ

        init?(_ config: AgentConfig) {
            guard let settings = config.selectedRole else { return nil }
            role = config.role
            self.settings = settings
            pluginDirectory = config.pluginDirectory
            stateDirectory = config.restore.stateDirectory
            backend = config.backend
            adapter = config.adapter
            restore = config.restore
            sim = config.sim
            bluez = config.bluez
        }
    }

    private struct Running: Sendable {
        var spec: Spec
        var plugin: any RolePlugin
        var bridge: PluginBridge
        var opened: BackendFactory.Opened?
        /// Follows the peripheral manager's refused registrations (``RoleStatus/degraded(by:)``).
        var health: Task<Void, Never>?
    }

    private struct State {
        var status = RoleStatus(phase: .stopped)
        var spec: Spec?
        var running: Running?
        var tail: Task<Void, Never>?
        var closed = false
        /// The restart waiting after a lost backend: its attempt number and the pause before it.
        var restart: (attempt: Int, pause: Task<Void, Never>)?
        var recovery = Recovery()
    }

    /// What the host did about lost backends since the agent started (`agent.status` `recovery`).
    public struct Recovery: Sendable, Hashable {
        /// Backends lost under a running role.
        public var backendLosses = 0
        /// Why the last one was lost (nil: none was).
        public var lastLoss: String?
        /// Starts after a loss, each attempt counted.
        public var restarts = 0
        /// The restarts that left the role running.
        public var restartsSucceeded = 0
        /// The attempt waiting for its pause to end, if any.
        public var pendingAttempt: Int?

        /// `{"backendLosses", "lastLoss", "restarts", "restartsSucceeded", "pendingRestart"}`
        /// (docs/control-api.md).
        public var json: JSON {
            [
                "backendLosses": .int(Int64(backendLosses)), "lastLoss": lastLoss.map(JSON.string) ?? .null,
                "restarts": .int(Int64(restarts)), "restartsSucceeded": .int(Int64(restartsSucceeded)),
                "pendingRestart": pendingAttempt.map { ["attempt": .int(Int64($0))] } ?? .null,
            ]
        }
    }

    /// What the host did about lost backends so far.
    public var recovery: Recovery {
        state.withLock { state in
            var recovery = state.recovery
            recovery.pendingAttempt = state.restart?.attempt
            return recovery
        }
    }

    /// The pause before restart `attempt` (1, 2, ...) after a lost backend: 1 s, doubling, at most 30 s.
    public static func restartPause(attempt: Int) -> Duration {
        .seconds(min(1 << min(max(attempt - 1, 0), 5), 30))
    }

    private let state = Mutex(State())
    private let loader: PluginLoader
    private let registry: MethodRegistry
    private let bus: EventBus
    private let options: Options
    private let backends: BackendFactory?
    private let observer = Mutex<(@Sendable (RoleManager) -> Void)?>(nil)
    private let changeObserver = Mutex<(@Sendable (RoleStatus, String) -> Void)?>(nil)
    private let fleet = Mutex<any FleetPublisher>(NoFleet())
    private let log: AgentLog

    /// A host that loads plugins with `loader` and wires them to `registry`
    /// and `bus`, with BLE managers from `backends` (nil: plugins get none).
    public init(
        loader: PluginLoader, registry: MethodRegistry, bus: EventBus, backends: BackendFactory? = nil,
        options: Options = Options(), log: AgentLog
    ) {
        self.backends = backends
        self.loader = loader
        self.registry = registry
        self.bus = bus
        self.options = options
        self.log = log
        backends?.observeLoss { [weak self] generation, reason in
            guard let self else { return }
            Task { await self.enqueue { host in await host.backendLost(generation: generation, reason: reason) } }
        }
    }

    /// The role state now: `degraded` while a running peripheral's manager
    /// has registrations BlueZ refused.
    public var status: RoleStatus {
        let (status, manager) = state.withLock { ($0.status, $0.running?.opened?.manager) }
        guard case .peripheral(let peripheral)? = manager else { return status }
        return status.degraded(by: peripheral.registrationFailures)
    }

    /// The problems the plugin of `config`'s role finds in its config
    /// (``PluginDescriptor/validateConfig``), with full paths; a plugin that
    /// cannot be loaded adds none (starting it reports why).
    public func configIssues(_ config: AgentConfig) -> [ConfigIssue] {
        PluginConfigCheck.run(config, roles: [config.role], loader: loader, loadFailures: false).issues
    }

    /// Calls `observer` with each started role's manager, and with
    /// ``RoleManager/none`` when it stops (the control methods follow it).
    public func observeManagers(_ observer: @escaping @Sendable (RoleManager) -> Void) {
        self.observer.withLock { $0 = observer }
    }

    /// The triggers of transitions the host makes on its own, not asked by ``apply(_:trigger:)`` or
    /// ``stop(trigger:)``: a lost backend and the restarts after it, a peripheral's registrations changing.
    public static let ownTriggers: Set<String> = ["backend-lost", "backend-restart", "registration"]

    /// Calls `observer` with each role status announced and its trigger (after it is logged and published). It
    /// runs on the task making the transition, so it must not block.
    public func observeChanges(_ observer: @escaping @Sendable (RoleStatus, _ trigger: String) -> Void) {
        changeObserver.withLock { $0 = observer }
    }

    /// Gives plugins started from now on `publisher` as ``RoleContext/fleet``.
    public func setFleetPublisher(_ publisher: any FleetPublisher) {
        fleet.withLock { $0 = publisher }
    }

    /// The running role's BLE manager (``RoleManager/none`` when no role runs).
    public var manager: RoleManager { state.withLock { $0.running?.opened?.manager } ?? .none }

    /// Makes `config`'s role run: starts it if nothing runs, restarts it if
    /// its role, plugin, plugin config, directories, backend or adapter
    /// changed or it had failed, and leaves a running plugin alone otherwise.
    /// Returns once the transition is done (the outcome is in ``status``).
    public func apply(_ config: AgentConfig, trigger: String) async {
        await enqueue { host in await host.transition(to: Spec(config), trigger: trigger) }
    }

    /// Stops the running plugin, if any, for good: an ``apply(_:trigger:)``
    /// queued behind it or made later does nothing (the agent is shutting
    /// down). Returns once the plugin has stopped (or its stop deadline passed).
    public func stop(trigger: String) async {
        state.withLock { state in
            state.closed = true
            state.restart?.pause.cancel()
            state.restart = nil
        }
        await enqueue { host in await host.stopRunning(trigger: trigger) }
    }

    private func enqueue(_ work: @escaping @Sendable (RoleHost) async -> Void) async {
        let task = state.withLock { state in
            let previous = state.tail
            let task = Task {
                await previous?.value
                await work(self)
            }
            state.tail = task
            return task
        }
        await task.value
    }

    private func transition(to spec: Spec?, trigger: String) async {
        let (current, phase, closed) = state.withLock { state in
            state.restart?.pause.cancel()
            state.restart = nil
            return (state.spec, state.status.phase, state.closed)
        }
        if closed || (spec != nil && spec == current && phase == .running) { return }
        await stopRunning(trigger: trigger)
        guard let spec else { return }
        state.withLock { $0.spec = spec }
        await start(spec, trigger: trigger)
    }

    private func start(_ spec: Spec, trigger: String) async {
        let role = Self.pluginRole(spec.role)
        let name = spec.settings.plugin
        publish(RoleStatus(phase: .starting, role: spec.role, plugin: name), trigger: trigger)
        let descriptor: PluginDescriptor
        let store: PluginStateStore
        do {
            descriptor = try loader.load(name: name, role: role, from: spec.pluginDirectory)
            store = try Self.makeStateStore(under: spec.stateDirectory, plugin: name)
        } catch {
            return fail(spec, "cannot load plugin \"\(name)\": \(error)", trigger: trigger)
        }
        if let problems = descriptor.validateConfig?(spec.settings.config, role), !problems.isEmpty {
            let reason = PluginConfigCheck.sentence(problems)
            return fail(spec, "plugin \"\(name)\" rejected its config: \(reason)", trigger: trigger)
        }
        var opened: BackendFactory.Opened?
        if let backends {
            do {
                opened = try await backends.open(
                    spec.role, backend: spec.backend, adapter: spec.adapter, restore: spec.restore, sim: spec.sim,
                    bluez: spec.bluez)
            } catch {
                return fail(spec, "cannot open the \(spec.backend.rawValue) backend: \(error)", trigger: trigger)
            }
        }
        let bridge = PluginBridge(namespace: descriptor.namespace, registry: registry, bus: bus)
        let log = self.log
        let context = RoleContext(
            role: role, config: spec.settings.config,
            logger: PluginLogger { level, message in log.plugin(name, level, message) },
            state: store, methods: bridge, events: bridge, manager: opened?.manager ?? .none,
            fleet: fleet.withLock { $0 })
        let plugin: any RolePlugin
        do {
            plugin = try descriptor.factory(context)
        } catch {
            bridge.deactivate()
            await opened?.close()
            let reason = (error as? JSONFieldErrors).map { PluginConfigCheck.sentence($0.errors) } ?? "\(error)"
            return fail(spec, "plugin \"\(name)\" rejected its context: \(reason)", trigger: trigger)
        }
        switch await Deadline.run(within: options.startDeadline, { try await plugin.start() }) {
        case .success:
            state.withLock { $0.running = Running(spec: spec, plugin: plugin, bridge: bridge, opened: opened) }
            if let opened { observer.withLock { $0 }?(opened.manager) }
            publish(RoleStatus(phase: .running, role: spec.role, plugin: name), trigger: trigger)
            if case .peripheral(let peripheral)? = opened?.manager { followRegistrations(of: peripheral) }
        case .failure(let error):
            bridge.deactivate()
            _ = await Deadline.run(within: options.stopDeadline) { await plugin.stop() }
            await opened?.close()
            fail(spec, "plugin \"\(name)\" failed to start: \(error)", trigger: trigger)
        case nil:
            bridge.deactivate()
            await opened?.close()
            fail(
                spec, "plugin \"\(name)\" did not start within \(options.startDeadline.components.seconds) s",
                trigger: trigger)
        }
    }

    private func stopRunning(trigger: String) async {
        guard
            let running = state.withLock({ state -> Running? in
                defer {
                    state.running = nil
                    state.spec = nil
                }
                return state.running
            })
        else { return }
        let name = running.spec.settings.plugin
        running.health?.cancel()
        publish(RoleStatus(phase: .stopping, role: running.spec.role, plugin: name), trigger: trigger)
        running.bridge.deactivate()
        if running.opened != nil { observer.withLock { $0 }?(.none) }
        let plugin = running.plugin
        let stopped = await Deadline.run(within: options.stopDeadline, { await plugin.stop() })
        if let opened = running.opened { _ = await Deadline.run(within: options.stopDeadline) { await opened.close() } }
        if stopped == nil {
            let note =
                "plugin \"\(name)\" did not stop within \(options.stopDeadline.components.seconds) s; continuing without it"
            publish(RoleStatus(phase: .stopped, role: running.spec.role, plugin: name, reason: note), trigger: trigger)
        } else {
            publish(RoleStatus(phase: .stopped, role: running.spec.role, plugin: name), trigger: trigger)
        }
    }

    /// Publishes a role `state` event each time the running peripheral's
    /// refused registrations change (degraded, or running again).
    private func followRegistrations(of peripheral: PeripheralManager) {
        let updates = peripheral.registrationUpdates()
        let task = Task { [weak self] in
            var last: [RegistrationFailure] = []
            for await failures in updates where failures != last {
                last = failures
                guard let self else { return }
                let status = self.status
                guard status.phase == .running || status.phase == .degraded else { continue }
                self.announce(status, trigger: "registration")
            }
        }
        state.withLock { state in
            if state.running == nil { task.cancel() } else { state.running?.health = task }
        }
    }

    /// The backend of the opening `generation` was lost: if that is what runs, stops the plugin, reports the role
    /// failed and schedules a restart.
    private func backendLost(generation: Int, reason: String) async {
        guard
            let running = state.withLock({ state in state.closed ? nil : state.running }),
            running.opened?.generation == generation
        else { return }
        let spec = running.spec
        state.withLock { state in
            state.recovery.backendLosses += 1
            state.recovery.lastLoss = reason
        }
        await stopRunning(trigger: "backend-lost")
        scheduleRestart(spec, after: "the \(spec.backend.rawValue) backend was lost: \(reason)", attempt: 1)
    }

    /// Reports the role failed for `reason` and starts it again after ``restartPause(attempt:)``.
    private func scheduleRestart(_ spec: Spec, after reason: String, attempt: Int) {
        let pause = Self.restartPause(attempt: attempt)
        let seconds = pause.components.seconds
        let scheduled = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.spec = spec
            state.restart?.pause.cancel()
            let task = Task { [weak self] in
                try? await Task.sleep(for: pause)
                guard !Task.isCancelled, let self else { return }
                await self.enqueue { host in await host.restart(spec, attempt: attempt) }
            }
            state.restart = (attempt, task)
            return true
        }
        guard scheduled else { return }
        fail(spec, "\(reason); starting again in \(seconds) s (attempt \(attempt))", trigger: "backend-lost")
    }

    /// Restart `attempt` after a lost backend, unless a reload or stop came first; schedules the next one if
    /// starting fails again.
    private func restart(_ spec: Spec, attempt: Int) async {
        let due = state.withLock { state -> Bool in
            guard !state.closed, state.spec == spec, state.restart?.attempt == attempt else { return false }
            state.restart = nil
            return true
        }
        guard due else { return }
        await start(spec, trigger: "backend-restart")
        let status = state.withLock { state in
            state.recovery.restarts += 1
            if state.status.phase != .failed { state.recovery.restartsSucceeded += 1 }
            return state.status
        }
        if status.phase == .failed {
            scheduleRestart(spec, after: status.reason ?? "starting failed", attempt: attempt + 1)
        }
    }

    private func fail(_ spec: Spec, _ reason: String, trigger: String) {
        publish(
            RoleStatus(phase: .failed, role: spec.role, plugin: spec.settings.plugin, reason: reason), trigger: trigger)
    }

    private func publish(_ status: RoleStatus, trigger: String) {
        state.withLock { $0.status = status }
        announce(status, trigger: trigger)
    }

    /// Logs `status` and publishes it as a role `state` event.
    private func announce(_ status: RoleStatus, trigger: String) {
        var line = status.role.map { "role \($0.rawValue)" } ?? "role"
        if let plugin = status.plugin { line += " (plugin \(plugin))" }
        line += ": \(status.phase.rawValue)"
        if let reason = status.reason { line += ": \(reason)" }
        log.log(status.phase == .failed ? .warning : .info, line)
        bus.publish(.state, ["agentState": "role", "trigger": .string(trigger), "roleState": status.json])
        changeObserver.withLock { $0 }?(status, trigger)
    }

    static func pluginRole(_ role: AgentConfig.Role) -> PluginRole {
        switch role {
        case .central: .central
        case .peripheral: .peripheral
        }
    }

    /// `<stateDirectory>/plugins/<name>`, created (mode 0700) with its parents.
    static func makeStateStore(under stateDirectory: String, plugin: String) throws(SystemError) -> PluginStateStore {
        var path = ""
        for component in "\(stateDirectory)/plugins/\(plugin)".split(separator: "/") {
            path += "/\(component)"
            if mkdir(path, 0o700) != 0 && errno != EEXIST { throw .current("mkdir", path: path) }
        }
        return PluginStateStore(directory: path)
    }
}
