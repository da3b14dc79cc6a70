// bleagent: loads roles.json, serves the control API, and runs the
// configured role's plugin. See docs/config.md and docs/control-api.md.
import AgentCore
import ControlProtocol
import Fleet
import Glibc
import IO

// Before any thread exists, so every thread inherits the mask and the
// signals wait for the signalfd.
SignalSource.block(Agent.handledSignals)
// A closed standard error (a stopped log reader) or any pipe whose reader went away must
// fail the write with EPIPE, not kill the agent (sockets already send with MSG_NOSIGNAL).
// Children get the default disposition back before exec (clinux_spawn_owned).
signal(SIGPIPE, SIG_IGN)
// Large tables and replies are mapped and unmapped whole, so their history leaves no holes in the heap.
LargeAllocations.mapAlone()

let usage = """
    usage: bleagent [--config PATH] [--log-level LEVEL]
           bleagent --check-config [--config PATH]
           bleagent --version

    Runs the BLE agent with the config at PATH (default /etc/bleagent/roles.json).
    --check-config validates the config and each configured plugin's config
    (loading the plugins without starting them), prints every problem and exits.
    --log-level: debug, info (default), notice, warning or error (docs/logging.md).
    Exit status: 0 clean stop, 64 usage, 78 invalid config, 1 start-up failure.

    """

func writeStandardError(_ text: String) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { return }
        bytes = bytes.dropFirst(written)
    }
}

func fail(_ message: String, status: Int32) -> Never {
    writeStandardError(message.hasSuffix("\n") ? message : message + "\n")
    exit(status)
}

/// Whether standard error is the journal's stream (systemd sets JOURNAL_STREAM to its "device:inode").
func standardErrorIsJournal() -> Bool {
    guard let value = getenv("JOURNAL_STREAM").map({ String(cString: $0) }) else { return false }
    var status = stat()
    guard fstat(2, &status) == 0 else { return false }
    return value == "\(status.st_dev):\(status.st_ino)"
}

var configPath = "/etc/bleagent/roles.json"
var checkOnly = false
var logLevel = LogLevel.info
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--config":
        guard let value = arguments.popFirst() else { fail("bleagent: --config needs a path\n\n" + usage, status: 64) }
        configPath = value
    case "--check-config": checkOnly = true
    case "--log-level":
        guard let value = arguments.popFirst(), let level = LogLevel(name: value) else {
            fail("bleagent: --log-level needs one of debug, info, notice, warning, error\n\n" + usage, status: 64)
        }
        logLevel = level
    case "--version":
        print("bleagent \(Agent.version) (control API \(ControlAPI.version))")
        exit(0)
    case "--help", "-h":
        print(usage, terminator: "")
        exit(0)
    default:
        fail("bleagent: unknown argument \"\(argument)\"\n\n" + usage, status: 64)
    }
}

let log = LogWriter(threshold: logLevel, journal: standardErrorIsJournal()).log

/// One line per problem, `FILE: PATH: message`, each escaped (a key in the file may hold a newline).
func escapedLines(_ error: ConfigError) -> String {
    error.issues.map { LogText.escaped("\(error.file): \($0)") }.joined(separator: "\n")
}

let config: AgentConfig
do {
    config = try AgentConfig.load(from: configPath)
} catch {
    fail("bleagent: invalid config; nothing started\n" + escapedLines(error), status: 78)
}
if checkOnly {
    let (issues, checked) = PluginConfigCheck.run(config, loader: PluginLoader())
    guard issues.isEmpty else {
        fail("bleagent: invalid config\n" + escapedLines(ConfigError(file: configPath, issues: issues)), status: 78)
    }
    print("\(configPath): valid (role \(config.role.rawValue), backend \(config.backend.rawValue))")
    for role in checked {
        let note = role.configChecked ? "its config checked" : "it declares no config check"
        print(LogText.escaped("  roles.\(role.role.rawValue): plugin \(role.plugin) loaded, \(note)"))
    }
    exit(0)
}

let locks = AgentLocks()
do {
    try locks.update(for: config)
} catch {
    fail("bleagent: cannot start: \(error)", status: 1)
}

do {
    let loop = try EventLoop(name: "bleagent")
    let registry = MethodRegistry()
    let bus = EventBus()
    let backends = BackendFactory(log: { log.info($0) })
    let roleHost = RoleHost(loader: PluginLoader(), registry: registry, bus: bus, backends: backends, log: log)
    let central = CentralControl(bus: bus)
    let peripheral = PeripheralControl(bus: bus)
    try central.register(in: registry)
    try peripheral.register(in: registry)
    roleHost.observeManagers { manager in
        switch manager {
        case .central(let manager):
            central.bind(manager)
        case .peripheral(let manager):
            peripheral.bind(manager)
        case .none:
            central.bind(nil)
            peripheral.bind(nil)
        }
    }
    let agent = Agent(
        config: config, configPath: configPath, bus: bus, roleHost: roleHost, backends: backends, loop: loop,
        notifier: SystemdNotifier(environment: ProcessEnvironment.current()), locks: locks, log: log)
    try agent.registerBuiltins(in: registry)
    agent.addStatusSection("central") { central.statusSummary() }
    // The fleet (docs/fleet.md): its MQTT connection lives on the loop; blocking work
    // (the outbox's fsyncs, config writes; DNS and TCP connect) on the blocking pool.
    let fleet = FleetHost(
        agent: agent, configPath: configPath, registry: registry, bus: bus, loop: loop, log: { log.info($0) })
    try fleet.attach()
    roleHost.setFleetPublisher(fleet)
    var options = ControlServerOptions(
        socketPath: config.control.socketPath, mode: config.control.mode, group: config.control.group,
        policy: PeerPolicy(
            allowedUids: config.control.allowedUids, ownUid: geteuid(), operatorGroup: config.control.group))
    options.maxClients = 16
    let server = ControlServer(options: options, loop: loop, registry: registry, bus: bus, log: log)
    try server.start()
    agent.attach(server)
    let signals = try SignalSource(signals: Agent.handledSignals, loop: loop) { signal in
        switch signal {
        case SIGHUP: Task { await agent.reload(trigger: "SIGHUP") }
        default: agent.stop(reason: signal == SIGINT ? "SIGINT" : "SIGTERM")
        }
    }
    log.info("listening on \(config.control.socketPath)")
    // Detached: the main thread is about to block in loop.run().
    Task.detached {
        await fleet.apply(agent.config)
        await agent.startRole()
        agent.announceStarted()
    }
    loop.run()
    server.close()
    withExtendedLifetime(signals) {}
    log.info("stopped")
    exit(0)
} catch {
    fail("bleagent: cannot start: \(error)", status: 1)
}
