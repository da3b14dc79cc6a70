// bleagent: loads roles.json, serves the control API, and runs the
// configured role's plugin. See docs/config.md and docs/control-api.md.
import AgentCore
import ControlProtocol
import Fleet
import Glibc

// Before any thread exists, so every thread inherits the mask and the
// signals wait for the signalfd.
SignalSource.blockAgentSignals()
// A closed standard error (a stopped log reader) or any pipe whose reader went away must
// fail the write with EPIPE, not kill the agent (sockets already send with MSG_NOSIGNAL).
// Children get the default disposition back before exec (clinux_spawn_owned).
signal(SIGPIPE, SIG_IGN)

let usage = """
    usage: bleagent [--config PATH]
           bleagent --check-config [--config PATH]
           bleagent --version

    Runs the BLE agent with the config at PATH (default /etc/bleagent/roles.json).
    --check-config validates the config, prints every problem and exits.
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

@Sendable func log(_ message: String) {
    writeStandardError("bleagent: \(message)\n")
}

var configPath = "/etc/bleagent/roles.json"
var checkOnly = false
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--config":
        guard let value = arguments.popFirst() else { fail("bleagent: --config needs a path\n\n" + usage, status: 64) }
        configPath = value
    case "--check-config": checkOnly = true
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

let config: AgentConfig
do {
    config = try AgentConfig.load(from: configPath)
} catch {
    fail("bleagent: invalid config; nothing started\n\(error)", status: 78)
}
if checkOnly {
    print("\(configPath): valid (role \(config.role.rawValue), backend \(config.backend.rawValue))")
    exit(0)
}

do {
    let loop = try EventLoop()
    let registry = MethodRegistry()
    let bus = EventBus()
    let backends = BackendFactory(log: log)
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
        notifier: SystemdNotifier(environment: ProcessEnvironment.current()), log: log)
    try agent.registerBuiltins(in: registry)
    // The fleet (docs/fleet.md): its MQTT connection lives on the loop; blocking work
    // (the outbox's fsyncs, config writes; DNS and TCP connect) on two threads of its own.
    let fleet = FleetHost(
        agent: agent, configPath: configPath, registry: registry, bus: bus, loop: AgentLoopAdapter(loop),
        worker: BlockingThread(name: "fleet-io"), connector: BlockingThread(name: "fleet-connect"), log: log)
    try fleet.attach()
    roleHost.setFleetPublisher(fleet)
    var options = ControlServerOptions(
        socketPath: config.control.socketPath, mode: config.control.mode, group: config.control.group,
        policy: PeerPolicy(
            allowedUids: config.control.allowedUids, ownUid: geteuid(), operatorGroup: config.control.group))
    options.maxClients = 16
    let server = ControlServer(options: options, loop: loop, registry: registry, bus: bus)
    try server.start()
    agent.attach(server)
    let signals = try SignalSource(loop: loop) { signal in
        switch signal {
        case SIGHUP: Task { await agent.reload(trigger: "SIGHUP") }
        default: agent.stop(reason: signal == SIGINT ? "SIGINT" : "SIGTERM")
        }
    }
    log("listening on \(config.control.socketPath)")
    // Detached: the main thread is about to block in loop.run().
    Task.detached {
        await fleet.apply(agent.config)
        await agent.startRole()
        agent.announceStarted()
    }
    loop.run()
    server.close()
    withExtendedLifetime(signals) {}
    log("stopped")
    exit(0)
} catch {
    fail("bleagent: cannot start: \(error)", status: 1)
}
