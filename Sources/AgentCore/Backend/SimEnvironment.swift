import Glibc
import IO
import Synchronization

/// The embedded simulator: a private dbus-daemon (its config written to the
/// runtime directory) and a `blesim` child serving `org.bluez` on it. Started
/// by ``BackendFactory`` for `backend: "sim"`, stopped on shutdown or when a
/// reload switches away from sim (or changes the sim settings). A blesim that
/// exits alone is started again on the same bus (``startBlesimAgain(log:)``).
final class SimEnvironment: Sendable {
    /// The sim settings it was started with, as configured.
    let settings: AgentConfig.Sim
    /// The private bus's address (what `DBUS_SYSTEM_BUS_ADDRESS` should be set
    /// to for BlueZ's own tools to see the same air).
    let busAddress: String
    /// The private bus daemon.
    let bus: ChildProcess
    /// The simulator now.
    var blesim: ChildProcess { blesimChild.withLock { $0 } }

    /// The settings blesim is started with (its binary found).
    private let launch: AgentConfig.Sim
    private let blesimChild: Mutex<ChildProcess>

    private init(
        settings: AgentConfig.Sim, launch: AgentConfig.Sim, busAddress: String, bus: ChildProcess,
        blesim: ChildProcess
    ) {
        self.settings = settings
        self.launch = launch
        self.busAddress = busAddress
        self.bus = bus
        self.blesimChild = Mutex(blesim)
    }

    /// Starts the bus, waits for its address, starts blesim on it and waits
    /// for its ready line (events, each with `readyDeadline`).
    static func start(
        _ settings: AgentConfig.Sim, configured: AgentConfig.Sim, log: @Sendable (String) -> Void
    ) async throws(ProcessFailure) -> SimEnvironment {
        let configPath = "\(settings.runtimeDirectory)/sim-bus.conf"
        let socketPath = "\(settings.runtimeDirectory)/sim-bus.sock"
        let directory = settings.runtimeDirectory
        try await BlockingPool.shared.run { () throws(ProcessFailure) in
            try makeDirectory(directory)
            unlink(socketPath)
            try write(busConfig(socketPath: socketPath), to: configPath)
        }
        let bus = try await SimChild.start(
            settings.dbusDaemon, ["--config-file=\(configPath)", "--nofork", "--print-address=1"],
            name: "dbus-daemon")
        let address: String
        let blesim: ChildProcess
        do throws(ProcessFailure) {
            address = try await SimChild.waitForLine(of: bus, within: settings.readyDeadline) { !$0.isEmpty }
            blesim = try await startBlesim(settings, on: address)
        } catch {
            await bus.terminate(within: .seconds(5))
            throw error
        }
        let environment = SimEnvironment(
            settings: configured, launch: settings, busAddress: address, bus: bus, blesim: blesim)
        log(
            "sim: private bus \(environment.busAddress) (pid \(environment.bus.pid)), "
                + "blesim pid \(blesim.pid) with \(settings.scenario)")
        return environment
    }

    /// Starts blesim again on the running bus, after the one before exited; returns it once it is ready. What else
    /// is attached to the bus (bluetoothctl, a client's tools) stays connected.
    func startBlesimAgain(log: @Sendable (String) -> Void) async throws(ProcessFailure) -> ChildProcess {
        let blesim = try await Self.startBlesim(launch, on: busAddress)
        blesimChild.withLock { $0 = blesim }
        log(
            "sim: private bus \(busAddress) (pid \(bus.pid)), blesim pid \(blesim.pid) with \(launch.scenario), "
                + "started again")
        return blesim
    }

    /// blesim on the bus at `address`, once it says it is ready.
    private static func startBlesim(
        _ settings: AgentConfig.Sim, on address: String
    ) async throws(ProcessFailure) -> ChildProcess {
        let blesim = try await SimChild.start(
            settings.binary ?? "blesim", ["--address", address, "--scenario", settings.scenario], name: "blesim")
        do throws(ProcessFailure) {
            _ = try await SimChild.waitForLine(of: blesim, within: settings.readyDeadline) {
                $0.hasPrefix("blesim: ready")
            }
        } catch {
            await blesim.terminate(within: .seconds(5))
            throw error
        }
        return blesim
    }

    /// Stops blesim, then the bus (SIGTERM, SIGKILL after 5 s), and reaps both.
    func stop() async {
        await blesim.terminate(within: .seconds(5))
        await bus.terminate(within: .seconds(5))
    }

    /// A bus that lets the agent and blesim (same user) own and call anything:
    /// it is private to this agent, reachable through a socket in its runtime directory.
    static func busConfig(socketPath: String) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:path=\(socketPath)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow user="*"/>
            <allow own="*"/>
            <allow send_destination="*" eavesdrop="true"/>
            <allow receive_sender="*"/>
            <allow send_type="method_call"/>
          </policy>
        </busconfig>

        """
    }

    private static func makeDirectory(_ path: String) throws(ProcessFailure) {
        var current = ""
        for component in path.split(separator: "/") {
            current += "/\(component)"
            if mkdir(current, 0o700) != 0 && errno != EEXIST {
                throw ProcessFailure("cannot create \(current): \(Errno.current)")
            }
        }
    }

    private static func write(_ text: String, to path: String) throws(ProcessFailure) {
        do {
            let fd = try FileDescriptor.open(path, .writeOnly, options: [.create, .truncate], permissions: 0o600)
            defer { fd.close() }
            try fd.writeAll(Array(text.utf8))
        } catch {
            throw ProcessFailure("cannot write \(path): \(error)")
        }
    }
}
