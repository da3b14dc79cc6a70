import DBus
import IO
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Everything a test of BLE code over D-Bus needs, started by one call and stopped when the test's body returns,
/// whether it returned or threw: a private bus (``PrivateBus``) with a directory of the test's own, blesim serving a
/// scenario on it (``BlesimProcess``), D-Bus connections, and processes whose environment points at the bus
/// (``TestProcess``). Every wait is an event with a deadline, awaited on the shared loop: nothing sleeps and nothing
/// blocks a thread of the cooperative pool, so tests using it run in parallel.
///
/// ```swift
/// try await TestBed.with(blesim: .air) { bed in
///     let central = CentralManager(backend: try await BlueZCentralBackend(connection: try await bed.connect()))
///     #expect(await first(central.stateUpdates()) { $0 == .poweredOn } != nil)
/// }
/// ```
public final class TestBed: Sendable {
    /// A scenario for blesim: a file, or JSON text the bed writes into its directory.
    public struct Scenario: Sendable {
        fileprivate enum Source { case file(String), json(String) }
        fileprivate let source: Source

        /// The scenario in the file at `path`.
        public static func file(_ path: String) -> Scenario { Scenario(source: .file(path)) }
        /// A scenario given as JSON text (blesim's scenario format, docs/blesim.md).
        public static func json(_ text: String) -> Scenario { Scenario(source: .json(text)) }
        /// The small scenario of Tests/BlesimTests/Fixtures/air.json: a few peripherals in the air.
        public static let air = Scenario.file(BlesimProcess.airScenario)
    }

    /// The private bus.
    public let bus: PrivateBus
    /// A fresh directory of this test's own (the bus's), removed at the end.
    public var directory: String { bus.directory }
    private let connections = Mutex<[DBusConnection]>([])
    private let processes = Mutex<[TestProcess]>([])
    private let simulators = Mutex<[BlesimProcess]>([])

    private init(bus: PrivateBus) { self.bus = bus }

    /// Runs `body` with a fresh bus (`policy` appended to its default policy, see ``PrivateBus/start(policy:)``)
    /// and, given a `blesim` scenario, blesim serving it (started with `options`, ready before `body` runs).
    /// Afterwards closes every connection the bed opened, terminates its processes, kills blesim and the bus.
    public static func with<T>(
        policy: String = "", blesim scenario: Scenario? = nil, options: [String] = [],
        _ body: (TestBed) async throws -> T
    ) async throws -> T {
        let bed = TestBed(bus: try await PrivateBus.start(policy: policy))
        do {
            if let scenario { _ = try await bed.startBlesim(scenario, options: options) }
            let result = try await body(bed)
            await bed.tearDown()
            return result
        } catch {
            await bed.tearDown()
            throw error
        }
    }

    /// blesim as ``with(policy:blesim:options:_:)`` started it (the first one the bed started), if any.
    public var blesim: BlesimProcess? { simulators.withLock { $0.first } }

    /// Starts blesim on the bus serving `scenario` (with `options`, such as `--adapters 2`) and waits until it is
    /// ready. The bed kills it at the end; a test may kill it earlier (a crash of bluetoothd) and start another.
    public func startBlesim(_ scenario: Scenario = .air, options: [String] = []) async throws -> BlesimProcess {
        let path: String
        switch scenario.source {
        case .file(let file): path = file
        case .json(let text): path = try await write("scenario-\(simulators.withLock { $0.count }).json", text)
        }
        let simulator = try await BlesimProcess.start(address: bus.address, scenario: path, options: options)
        simulators.withLock { $0.append(simulator) }
        return simulator
    }

    /// A new connection to the bus, closed by the bed at the end.
    public func connect() async throws -> DBusConnection {
        let connection = try await bus.connect()
        connections.withLock { $0.append(connection) }
        return connection
    }

    /// Starts `executable` (a path, or a name looked up in `PATH`) with `arguments`, its environment this process's
    /// with `DBUS_SYSTEM_BUS_ADDRESS` and `DBUS_SESSION_BUS_ADDRESS` set to the bus and `environment` on top. The
    /// bed terminates it at the end if it still runs.
    public func spawn(
        _ executable: String, _ arguments: [String] = [], environment: [String: String] = [:], input: Bool = false
    ) async throws -> TestProcess {
        let bus = ["DBUS_SYSTEM_BUS_ADDRESS": bus.address, "DBUS_SESSION_BUS_ADDRESS": bus.address]
        let process = try await TestProcess(
            executable, arguments, environment: bus.merging(environment) { $1 }, input: input)
        processes.withLock { $0.append(process) }
        return process
    }

    /// Writes `text` to the file `name` in ``directory`` (on the blocking pool) and returns its path.
    public func write(_ name: String, _ text: String) async throws -> String {
        let path = directory + "/" + name
        try await writeText(text, to: path)
        return path
    }

    private func tearDown() async {
        for connection in connections.withLock({ $0 }) { await connection.close() }
        for process in processes.withLock({ $0 }) { await process.terminate(within: .seconds(5)) }
        for simulator in simulators.withLock({ $0 }) { await simulator.kill() }
        bus.stop()
    }
}
