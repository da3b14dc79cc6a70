import BLE
import BlueZ
import DBus
import Glibc
import IO
import RoleKit
import Synchronization

/// Makes the role's BLE manager from the config: for `bluez` on the system
/// bus (`DBUS_SYSTEM_BUS_ADDRESS` honoured), for `sim` on the private bus of
/// the embedded simulator, which it starts (dbus-daemon, then blesim, each
/// awaited on its ready output) and keeps across reloads while the backend
/// stays `sim` with the same settings.
///
/// It watches what it opened: when the role's bus connection closes under
/// it, or the simulator's bus or blesim exits, the observer set with
/// ``observeLoss(_:)`` hears which ``Opened`` was lost and why (once; never
/// for a backend closed on purpose).
public final class BackendFactory: Sendable {
    /// A manager and how to take it down cleanly.
    public struct Opened: Sendable {
        /// The manager for the plugin's context.
        public let manager: RoleManager
        /// Names this opening in what ``observeLoss(_:)`` reports.
        public let generation: Int
        /// Stops scans, closes links, unregisters the application and
        /// advertisement, and closes the bus connection.
        public let close: @Sendable () async -> Void
    }

    private let simulator = Mutex<SimEnvironment?>(nil)
    /// The bus connection of the running role's manager, while one runs.
    private let connection = Mutex<DBusConnection?>(nil)
    private let log: @Sendable (String) -> Void
    /// The watch on what is open now (the running role's backend), which a simulator exit reports to.
    private let openLoss = Mutex<BackendLoss?>(nil)
    private let lossObserver = Mutex<(@Sendable (_ generation: Int, _ reason: String) -> Void)?>(nil)
    private let generations = Mutex(0)

    /// A factory logging through `log`.
    public init(log: @escaping @Sendable (String) -> Void) {
        self.log = log
    }

    /// Calls `observer` when an opened backend is lost while open, with its ``Opened/generation`` and the reason
    /// (`"its bus connection closed (the peer closed the connection)"`, `"blesim exited (killed by signal 9)"`).
    /// It runs on whichever thread noticed, so it must not block.
    public func observeLoss(_ observer: @escaping @Sendable (_ generation: Int, _ reason: String) -> Void) {
        lossObserver.withLock { $0 = observer }
    }

    /// The private bus's address while the simulator runs.
    public var simBusAddress: String? { simulator.withLock { $0?.busAddress } }

    /// The call bounds of the running role's bus connection (its exported objects: the GATT application, the
    /// advertisement), while a role runs.
    public var busCallCounters: (limits: ObjectServer.Limits, counters: ObjectServer.CallCounters)? {
        connection.withLock { $0.map { ($0.objects.limits, $0.objects.callCounters) } }
    }

    /// How the running role's bus connection has been read (reads, readinesses paced) and its read interval,
    /// while a role runs.
    public var busReads: (statistics: DBusConnection.ReadStatistics, interval: Duration)? {
        connection.withLock { $0.map { ($0.readStatistics, $0.readInterval) } }
    }

    /// The simulator's child process ids (bus, blesim) while it runs.
    public var simProcessIDs: [Int32] { simulator.withLock { $0.map { [$0.bus.pid, $0.blesim.pid] } ?? [] } }

    /// Makes the simulator match `config`: started for `sim` (restarted if
    /// its settings changed or its bus exited; blesim alone started again on
    /// the same bus if only blesim exited), stopped otherwise.
    public func prepare(_ config: AgentConfig) async throws(ProcessFailure) {
        try await prepare(backend: config.backend, sim: config.sim)
    }

    func prepare(backend: AgentConfig.Backend, sim: AgentConfig.Sim) async throws(ProcessFailure) {
        let current = simulator.withLock { $0 }
        if backend == .sim, let current, current.settings == sim, current.bus.isRunning {
            if current.blesim.isRunning { return }
            // blesim exited alone: a new one on the same bus keeps what else is attached to it.
            do throws(ProcessFailure) {
                let blesim = try await current.startBlesimAgain(log: log)
                watch(blesim, of: current, as: "blesim")
                return
            } catch {
                log("sim: blesim did not start again on the same bus (\(error)); starting the whole simulator again")
            }
        }
        if let current {
            simulator.withLock { $0 = nil }
            log("sim: stopping blesim (pid \(current.blesim.pid)) and the private bus (pid \(current.bus.pid))")
            await current.stop()
        }
        guard backend == .sim else { return }
        var settings = sim
        if settings.binary == nil { settings.binary = Self.besideExecutable("blesim") }
        let started = try await SimEnvironment.start(settings, configured: sim, log: log)
        simulator.withLock { $0 = started }
        watch(started.bus, of: started, as: "the simulator's bus")
        watch(started.blesim, of: started, as: "blesim")
    }

    /// Reports `child`'s exit as a loss of the open backend, unless `environment` was stopped on purpose first
    /// (it is no longer the current one). One task per child, ending with it.
    private func watch(_ child: ChildProcess, of environment: SimEnvironment, as name: String) {
        Task { [weak self] in
            let status = await child.wait()
            guard let self, self.simulator.withLock({ $0 === environment }) else { return }
            self.log("sim: \(name) (pid \(child.pid)) exited (\(status))")
            self.openLoss.withLock { $0 }?.lost("\(name) exited (\(status))")
        }
    }

    /// A loss watch for a new opening of `connection`, made the current one; it reports the connection closing
    /// under the role (one task, ending with the connection).
    private func watchLoss(of connection: DBusConnection) -> BackendLoss {
        let generation = generations.withLock { value in
            value += 1
            return value
        }
        let loss = BackendLoss(generation: generation) { [weak self] generation, reason in
            self?.lossObserver.withLock { $0 }?(generation, reason)
        }
        openLoss.withLock { $0 = loss }
        Task {
            await connection.closed()
            loss.lost("its bus connection closed (\(connection.closeReason ?? "closed on this side"))")
        }
        return loss
    }

    /// Marks `loss` as closing on purpose and stops sending simulator exits to it.
    private func closing(_ loss: BackendLoss) {
        loss.closing()
        openLoss.withLock { current in
            if current === loss { current = nil }
        }
    }

    /// Stops the simulator, if it runs.
    public func shutdown() async {
        let current = simulator.withLock { state in
            defer { state = nil }
            return state
        }
        if let current {
            log("sim: stopping blesim (pid \(current.blesim.pid)) and the private bus (pid \(current.bus.pid))")
            await current.stop()
        }
    }

    /// Connects to `backend`'s bus and makes `role`'s manager for `adapter`,
    /// restoring state under `restore`, the central's GATT client as `bluez` says.
    func open(
        _ role: AgentConfig.Role, backend: AgentConfig.Backend, adapter adapterName: String,
        restore: AgentConfig.Restore, sim: AgentConfig.Sim, bluez: AgentConfig.BlueZ
    ) async throws -> Opened {
        try await prepare(backend: backend, sim: sim)
        do {
            return try await openOnce(role, backend: backend, adapter: adapterName, restore: restore, bluez: bluez)
        } catch {
            // Seen once in a few runs right after a role switch on the sim
            // (org.freedesktop.DBus.Error.NoReply); one more attempt on a fresh connection.
            log("opening the \(backend.rawValue) backend failed (\(error)); trying once more")
            return try await openOnce(role, backend: backend, adapter: adapterName, restore: restore, bluez: bluez)
        }
    }

    private func openOnce(
        _ role: AgentConfig.Role, backend: AgentConfig.Backend, adapter adapterName: String,
        restore: AgentConfig.Restore, bluez: AgentConfig.BlueZ
    ) async throws -> Opened {
        let connection: DBusConnection
        do {
            if backend == .sim {
                guard let address = simBusAddress else { throw ProcessFailure("the simulator is not running") }
                connection = try await DBusConnection.connect(address: address, readInterval: bluez.readInterval)
            } else {
                connection = try await DBusConnection.system(readInterval: bluez.readInterval)
            }
        } catch {
            throw ProcessFailure("connecting to the \(backend.rawValue) bus: \(error)")
        }
        self.connection.withLock { $0 = connection }
        let store = RestorationStore(
            directory: restore.stateDirectory, restoreIdentifier: "\(restore.identifier)-\(role.rawValue)")
        switch role {
        case .central:
            let backend: BlueZCentralBackend
            do {
                backend = try await BlueZCentralBackend(
                    connection: connection,
                    options: .init(acquireNotify: bluez.acquireNotify, acquireWrite: bluez.acquireWrite))
            } catch {
                await connection.close()
                forget(connection)
                throw ProcessFailure("starting the central backend: \(error)")
            }
            let central = CentralManager(backend: backend, options: .init(adapter: adapterName, restoration: store))
            let loss = watchLoss(of: connection)
            return Opened(manager: .central(central), generation: loss.generation) {
                self.closing(loss)
                central.stopScan()
                for peripheral in central.retrieveConnectedPeripherals(withServices: []) {
                    try? await central.cancelConnection(peripheral)
                }
                backend.stop()
                await connection.close()
                self.forget(connection)
            }
        case .peripheral:
            let backend: BlueZPeripheralBackend
            do {
                backend = try await BlueZPeripheralBackend.start(connection: connection)
            } catch {
                await connection.close()
                forget(connection)
                throw ProcessFailure("starting the peripheral backend: \(error)")
            }
            let peripheral = PeripheralManager(
                backend: backend, options: .init(adapter: adapterName, restoration: store))
            let loss = watchLoss(of: connection)
            return Opened(manager: .peripheral(peripheral), generation: loss.generation) {
                self.closing(loss)
                try? await peripheral.stopAdvertising()
                try? await peripheral.removeAllServices()
                await backend.shutdown()
                await connection.close()
                self.forget(connection)
            }
        }
    }

    private func forget(_ closed: DBusConnection) {
        connection.withLock { current in
            if current === closed { current = nil }
        }
    }

    /// `name` in the directory of the running executable (`/proc/self/exe`).
    static func besideExecutable(_ name: String) -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return name }
        let path = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return FilePath.directory(of: path) + "/" + name
    }
}
