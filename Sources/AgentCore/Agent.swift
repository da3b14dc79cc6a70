import ControlProtocol
import Glibc
import IO
import JSON
import RoleKit
import Synchronization

/// The running agent apart from its entry point: the config it runs, the
/// built-in methods (`agent.*`), the role host that runs the configured
/// role's plugin, reload and shutdown.
public final class Agent: Sendable {
    /// This build's version.
    public static let version = "0.1.0"

    /// The signals the agent handles (through a signalfd on its loop): SIGHUP reloads, SIGTERM and SIGINT stop.
    /// Block them on the main thread before any other thread starts, so every thread inherits the mask.
    public static let handledSignals: [Int32] = [SIGHUP, SIGTERM, SIGINT]

    private struct State {
        var config: AgentConfig
        var stopping = false
    }

    private let state: Mutex<State>
    private let configPath: String
    private let bus: EventBus
    private let roleHost: RoleHost
    private let backends: BackendFactory?
    private let loop: EventLoop
    private let notifier: SystemdNotifier?
    private let started = SystemdNotifier.monotonicMicroseconds()
    private let server: Mutex<ControlServer?> = Mutex(nil)
    private let locks: AgentLocks
    private let extensions = Mutex(Extensions())
    private let log: AgentLog

    /// What other parts of the agent (the fleet) hang on it.
    private struct Extensions {
        var statusSections: [(name: String, section: @Sendable () -> JSON?)] = []
        var reloadObservers: [@Sendable (AgentConfig) async -> Void] = []
        var stopHooks: [@Sendable () async -> Void] = []
    }

    /// An agent running `config`, read from `configPath` (re-read on reload),
    /// whose role runs in `roleHost`; `locks` holds the directories `config`
    /// needs (a reload moves them).
    public init(
        config: AgentConfig, configPath: String, bus: EventBus, roleHost: RoleHost, backends: BackendFactory? = nil,
        loop: EventLoop, notifier: SystemdNotifier?, locks: AgentLocks = AgentLocks(), log: AgentLog
    ) {
        self.locks = locks
        self.backends = backends
        self.state = Mutex(State(config: config))
        self.configPath = configPath
        self.bus = bus
        self.roleHost = roleHost
        self.loop = loop
        self.notifier = notifier
        self.log = log
        // Where the role host settles on its own (a lost backend, its restarts, a peripheral's registrations),
        // systemd's STATUS= follows.
        roleHost.observeChanges { [weak self] status, trigger in
            guard let self, RoleHost.ownTriggers.contains(trigger),
                [.running, .degraded, .failed].contains(status.phase)
            else { return }
            try? self.notifier?.send("STATUS=\(self.statusLine(status.phase))")
        }
    }

    /// The config in force.
    public var config: AgentConfig { state.withLock { $0.config } }

    /// Adds `name` to the result of `agent.status`, filled by `section` at
    /// each call (left out while it returns nil).
    public func addStatusSection(_ name: String, _ section: @escaping @Sendable () -> JSON?) {
        extensions.withLock { $0.statusSections.append((name, section)) }
    }

    /// Calls `observer` with each config a reload applied, after the role host applied it.
    public func observeReloads(_ observer: @escaping @Sendable (AgentConfig) async -> Void) {
        extensions.withLock { $0.reloadObservers.append(observer) }
    }

    /// Runs `hook` during a clean stop, after the role stopped and before the loop stops.
    public func addStopHook(_ hook: @escaping @Sendable () async -> Void) {
        extensions.withLock { $0.stopHooks.append(hook) }
    }

    /// Attaches the control server whose allowed uids follow reloads.
    public func attach(_ server: ControlServer) {
        self.server.withLock { $0 = server }
    }

    /// Registers `agent.status`, `agent.reload`, `agent.shutdown` and `agent.methods`.
    public func registerBuiltins(in registry: MethodRegistry) throws(RegistrationError) {
        try registry.registerImmediate("agent.status", params: .none) { [weak self] _ in
            guard let self else { throw RPCError(.shuttingDown, "the agent is stopping") }
            return self.status()
        }
        try registry.registerBuiltin("agent.reload", params: .none) { [weak self] _ in
            guard let self else { throw RPCError(.shuttingDown, "the agent is stopping") }
            switch await self.reload(trigger: "control") {
            case .success: return self.status()
            case .failure(let error): throw Self.rpcError(error)
            }
        }
        try registry.registerBuiltin("agent.shutdown", params: .none) { [weak self] call in
            guard let self else { throw RPCError(.shuttingDown, "the agent is stopping") }
            call.afterReply.add { self.stop(reason: "agent.shutdown from pid \(call.peer.pid)") }
            return ["stopping": true]
        }
        try registry.registerImmediate("agent.methods", params: .none) { [weak registry] _ in
            let names = (registry?.methods ?? []) + ["events.subscribe", "events.unsubscribe"]
            return .array(names.sorted().map(JSON.string))
        }
    }

    /// The result of `agent.status` (docs/control-api.md).
    public func status() -> JSON {
        let config = self.config
        let uptime = (SystemdNotifier.monotonicMicroseconds() - started) / 1_000_000
        var result: JSON = [
            "agent": "bleagent",
            "version": .string(Self.version),
            "apiVersion": .int(ControlAPI.version),
            "pid": .int(Int64(getpid())),
            "uptimeSeconds": .int(Int64(uptime)),
            "config": .string(config.file),
            "role": .string(config.role.rawValue),
            "backend": .string(config.backend.rawValue),
            "adapter": .string(config.adapter),
            "plugin": config.selectedRole.map { .string($0.plugin) } ?? .null,
            "roleState": roleHost.status.json,
            "recovery": roleHost.recovery.json,
        ]
        guard case .object(var object) = result else { return result }
        if let address = backends?.simBusAddress { object["sim"] = ["busAddress": .string(address)] }
        object["limits"] = limitsJSON()
        for (name, section) in extensions.withLock({ $0.statusSections }) {
            if let value = section() { object[name] = value }
        }
        result = .object(object)
        return result
    }

    /// The control server's bounds and the blocking pool's backlog (docs/control-api.md, "Limits").
    private func limitsJSON() -> JSON {
        var limits: JSONObject = ["blockingPool": ["pending": .int(Int64(BlockingPool.shared.pending))]]
        if let (bounds, counters) = backends?.busCallCounters {
            limits["dbusCalls"] = [
                "inFlight": .int(Int64(counters.inFlight)), "maxInFlight": .int(Int64(bounds.maxCallsInFlight)),
                "peakInFlight": .int(Int64(counters.peakInFlight)), "queued": .int(Int64(counters.queued)),
                "maxQueued": .int(Int64(bounds.maxQueuedCalls)), "refused": .int(Int64(counters.refused)),
            ]
        }
        if let (statistics, interval) = backends?.busReads {
            let (seconds, attoseconds) = interval.components
            limits["busReads"] = [
                "reads": .int(Int64(statistics.reads)), "paced": .int(Int64(statistics.paced)),
                "readIntervalMicroseconds": .int(seconds * 1_000_000 + attoseconds / 1_000_000_000_000),
            ]
        }
        if let server = server.withLock({ $0 }) {
            let counters = server.counters
            let options = server.options
            limits["control"] = [
                "clients": .int(Int64(counters.clients)), "maxClients": .int(Int64(options.maxClients)),
                "refusedClients": .int(Int64(counters.refusedClients)),
                "requestsInFlight": .int(Int64(counters.requestsInFlight)),
                "maxRequestsInFlight": .int(Int64(options.maxRequestsInFlight)),
                "pausedClients": .int(Int64(counters.pausedClients)), "pausedReads": .int(Int64(counters.pausedReads)),
                "partialLineTimeoutSeconds": .int(options.partialLineTimeout.components.seconds),
                "idleClosed": .int(Int64(counters.idleClosed)),
            ]
        }
        return .object(limits)
    }

    /// Starts the configured role's plugin; returns once it runs or failed
    /// (the agent lives on either way; ``status()`` says which).
    public func startRole() async {
        await roleHost.apply(config, trigger: "start")
    }

    /// Re-reads and validates the config, including the selected role's
    /// plugin config (its ``RoleKit/PluginDescriptor/validateConfig``) and
    /// the locks on its directories. A valid one replaces the running config
    /// and the role host applies it (switching role or restarting the plugin
    /// if its settings changed) before this returns; an invalid one is
    /// rejected and the running config and role kept. Either way a `state`
    /// event says what happened, and systemd hears RELOADING=1 then READY=1.
    @discardableResult
    public func reload(trigger: String) async -> Result<AgentConfig, ConfigError> {
        try? notifier?.reloading()
        switch await checkedConfig() {
        case .success(let config):
            state.withLock { $0.config = config }
            if let server = server.withLock({ $0 }) {
                // control.group, like the socket's path and mode, keeps its start-up value.
                var policy = server.options.policy
                policy.allowedUids = config.control.allowedUids
                server.setPolicy(policy)
            }
            log.info(
                "reloaded \(configPath) (\(trigger)): role \(config.role.rawValue), backend \(config.backend.rawValue)")
            await roleHost.apply(config, trigger: trigger)
            for observer in extensions.withLock({ $0.reloadObservers }) { await observer(config) }
            bus.publish(.state, stateEvent("reloaded", trigger: trigger))
            try? notifier?.ready(status: readyStatus)
            return .success(config)
        case .failure(let error):
            log.warning("reload (\(trigger)) rejected; keeping the running config")
            for issue in error.issues { log.warning("\(error.file): \(issue)") }
            var data = stateEvent("reload rejected", trigger: trigger)
            if case .object(var object) = data {
                object["errors"] = Self.issuesJSON(error)
                data = .object(object)
            }
            bus.publish(.state, data)
            try? notifier?.ready(status: readyStatus)
            return .failure(error)
        }
    }

    /// The config file read and validated, its plugin config checked and
    /// its directories locked: any problem is a config error.
    private func checkedConfig() async -> Result<AgentConfig, ConfigError> {
        await AgentConfig.read(from: configPath).flatMap { config in
            Result { () throws(ConfigError) in try check(config) }
        }
    }

    /// `config` once its plugin's checks pass and its state and runtime directories are locked.
    private func check(_ config: AgentConfig) throws(ConfigError) -> AgentConfig {
        let pluginIssues = roleHost.configIssues(config)
        guard pluginIssues.isEmpty else { throw ConfigError(file: configPath, issues: pluginIssues) }
        do {
            try locks.update(for: config)
        } catch {
            let field = if case .held(_, let field, _) = error { field } else { "" }
            throw ConfigError(file: configPath, issues: [ConfigIssue(path: field, message: "\(error)")])
        }
        return config
    }

    /// Starts a clean stop: STOPPING=1, a `state` event, the role's plugin
    /// stopped (within its deadline), then the loop stops (the caller closes
    /// the server after ``EventLoop/run()`` returns).
    public func stop(reason: String) {
        let first = state.withLock { state in
            defer { state.stopping = true }
            return !state.stopping
        }
        guard first else { return }
        log.info("stopping: \(reason)")
        try? notifier?.stopping()
        bus.publish(.state, stateEvent("stopping", trigger: reason))
        let hooks = extensions.withLock { $0.stopHooks }
        Task { [roleHost, backends, loop] in
            await roleHost.stop(trigger: reason)
            await backends?.shutdown()
            for hook in hooks { await hook() }
            // Let the events reach the loop's queue before the loop stops.
            loop.execute { loop.stop() }
        }
    }

    /// Publishes the `state` event for a completed start.
    public func announceStarted() {
        try? notifier?.ready(status: readyStatus)
        bus.publish(.state, stateEvent("started", trigger: "start"))
    }

    /// The STATUS= text sent with READY=1: the role and its state.
    private var readyStatus: String { statusLine(roleHost.status.phase) }

    /// The STATUS= text for the role in `phase`.
    private func statusLine(_ phase: RolePhase) -> String {
        "\(config.role.rawValue) role \(phase.rawValue) (config \(configPath))"
    }

    private func stateEvent(_ agentState: String, trigger: String) -> JSON {
        let config = self.config
        return [
            "agentState": .string(agentState), "trigger": .string(trigger), "role": .string(config.role.rawValue),
            "backend": .string(config.backend.rawValue),
            "roleState": roleHost.status.json,
        ]
    }

    static func issuesJSON(_ error: ConfigError) -> JSON {
        .array(error.issues.map { ["path": .string($0.path), "message": .string($0.message)] })
    }

    static func rpcError(_ error: ConfigError) -> RPCError {
        RPCError(
            .configInvalid, "the config is invalid; the running config is kept",
            data: ["file": .string(error.file), "errors": issuesJSON(error)])
    }
}
