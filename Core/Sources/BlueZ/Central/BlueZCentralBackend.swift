import BLE
import DBus
import GATT
import Synchronization

/// The ``CentralBackend`` over bluetoothd's D-Bus API (BlueZ 5.66), or over
/// anything that serves `org.bluez` the same way (blesim).
///
/// ```swift
/// let central = CentralManager(backend: try await BlueZCentralBackend.system())
/// ```
///
/// On creation it subscribes to NameOwnerChanged for `org.bluez` and to every
/// signal from `org.bluez` (InterfacesAdded, InterfacesRemoved,
/// PropertiesChanged) *before* it looks up the owner; the manager asks for
/// GetManagedObjects when bluetoothd is present. Events are put in bus order
/// by an ``EventGate`` (serials: nothing lost, nothing doubled). Every failed
/// call becomes a ``BLEError`` with the D-Bus error name kept
/// (``BLEError/init(dbus:)``); AccessDenied also yields
/// ``CentralBackendEvent/accessDenied``.
public final class BlueZCentralBackend: CentralBackend {
    /// Choices of the fast paths.
    public struct Options: Sendable, Hashable {
        /// Use AcquireNotify sockets for notifications (falling back to
        /// StartNotify when BlueZ refuses); false for StartNotify only.
        public var acquireNotify: Bool
        /// Use AcquireWrite sockets for writes without response (falling back
        /// to WriteValue `type: "command"`); false for WriteValue only.
        public var acquireWrite: Bool
        /// The deadline of Device1.Connect (BlueZ's own connect timeout is
        /// shorter; this only bounds a daemon that never answers).
        public var connectTimeout: Duration
        /// The deadline of any other call.
        public var callTimeout: Duration

        /// Options; fast paths on by default.
        public init(
            acquireNotify: Bool = true, acquireWrite: Bool = true, connectTimeout: Duration = .seconds(60),
            callTimeout: Duration = .seconds(30)
        ) {
            self.acquireNotify = acquireNotify
            self.acquireWrite = acquireWrite
            self.connectTimeout = connectTimeout
            self.callTimeout = callTimeout
        }
    }

    /// The fd sockets in use, shared with the socket thread's handler.
    final class SocketTable: Sendable {
        let state = Mutex(Sockets())

        func withLock<R>(_ body: (inout Sockets) -> R) -> R { state.withLock { body(&$0) } }
    }

    struct Sockets {
        /// AcquireNotify sockets by characteristic path.
        var notify: [String: Int32] = [:]
        /// AcquireWrite sockets by characteristic path.
        var write: [String: Int32] = [:]
        /// Characteristics whose AcquireNotify / AcquireWrite BlueZ refused.
        var notifyRefused: Set<String> = []
        var writeRefused: Set<String> = []
        /// Characteristics notifying through StartNotify.
        var started: Set<String> = []
    }

    /// The event stream; consumed by one manager.
    public let events: AsyncStream<CentralBackendEvent>
    /// The connection used.
    public let connection: DBusConnection
    /// The options.
    public let options: Options
    let gate: EventGate
    let sockets: SocketTable
    let loop: SocketLoop
    private let tasks = Mutex<[Task<Void, Never>]>([])

    /// Connects to the system bus (`DBUS_SYSTEM_BUS_ADDRESS` if set) and
    /// starts following `org.bluez`.
    public static func system(options: Options = Options()) async throws(BLEError) -> BlueZCentralBackend {
        let connection: DBusConnection
        do {
            connection = try await DBusConnection.system()
        } catch {
            throw BLEError(callFailure: error)
        }
        return try await BlueZCentralBackend(connection: connection, options: options)
    }

    /// Follows `org.bluez` on `connection` (which the caller keeps open).
    public init(connection: DBusConnection, options: Options = Options()) async throws(BLEError) {
        self.connection = connection
        self.options = options
        let (events, continuation) = AsyncStream<CentralBackendEvent>.makeStream(bufferingPolicy: .unbounded)
        self.events = events
        let gate = EventGate(continuation: continuation)
        self.gate = gate
        let table = SocketTable()
        self.sockets = table
        self.loop = SocketLoop { event in Self.socketEvent(event, gate: gate, sockets: table) }
        let owners: NameOwnerChanges
        let signals: DBusSignalStream
        let initialOwner: String?
        do {
            owners = try await connection.nameOwnerChanges(of: BlueZNames.service, buffering: .unbounded)
            signals = try await connection.signals(MatchRule(sender: BlueZNames.service), buffering: .unbounded)
            initialOwner = try await connection.getNameOwner(BlueZNames.service)
        } catch {
            loop.stop()
            throw BLEError(callFailure: error)
        }
        if let initialOwner { gate.ownerChanged(from: nil, to: initialOwner) } else { gate.initiallyAbsent() }
        let ownerTask = Task { [weak self] in
            for await change in owners where change.name == BlueZNames.service {
                guard let self else { return }
                if self.gate.ownerChanged(from: change.oldOwner, to: change.newOwner) { self.forgetSockets() }
            }
        }
        let loop = self.loop
        let signalTask = Task { [gate] in
            for await signal in signals {
                guard let delta = BlueZDecoding.delta(of: signal) else { continue }
                gate.signal(delta, sender: signal.sender, serial: signal.serial)
                if case .interfacesRemoved(let path, let interfaces) = delta,
                    interfaces.contains(BlueZInterface.gattCharacteristic)
                {
                    Self.forget(characteristic: path, sockets: table, loop: loop)
                }
            }
            gate.finish()
        }
        tasks.withLock { $0 = [ownerTask, signalTask] }
    }

    deinit {
        tasks.withLock { $0.forEach { $0.cancel() } }
        loop.stop()
    }

    /// Stops following bluetoothd: closes the fd sockets and ends ``events``
    /// (the connection stays open; close it yourself).
    public func stop() {
        tasks.withLock { $0.forEach { $0.cancel() } }
        loop.stop()
        gate.finish()
    }

    // MARK: Calls

    /// Calls `member` on bluetoothd; failures become ``BLEError``s, and
    /// AccessDenied is also reported as an event.
    func call(
        _ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = [],
        timeout: Duration? = nil
    ) async throws(BLEError) -> DBusMessage {
        do {
            return try await connection.call(
                destination: BlueZNames.service, path: try ObjectPath(path), interface: interface, member: member,
                arguments: arguments, timeout: timeout ?? options.callTimeout)
        } catch {
            let failure = BLEError(callFailure: error)
            if failure.code == .unauthorized { gate.yield(.accessDenied) }
            throw failure
        }
    }

    /// GetManagedObjects; the reply goes through the gate.
    public func requestSnapshot() async throws(BLEError) {
        let reply = try await call("/", BlueZNames.objectManager, "GetManagedObjects")
        let tree: ObjectTreeSnapshot
        do {
            guard let body = try reply.arguments().first else { throw BLEError(.failed, message: "empty reply") }
            tree = BlueZDecoding.managedObjects(body)
        } catch {
            throw BLEError(callFailure: error)
        }
        gate.snapshot(tree, sender: reply.sender, serial: reply.serial)
    }

    /// Properties.GetAll, fed as InterfacesAdded.
    public func refresh(path: String, interface: String) async throws(BLEError) {
        let reply = try await call(path, BlueZNames.properties, "GetAll", [.string(interface)])
        let body = (try? reply.arguments().first) ?? nil
        gate.refreshed(
            path: path, interface: interface, properties: body.map(BlueZDecoding.properties) ?? [:],
            sender: reply.sender)
    }

    /// Adapter1.SetDiscoveryFilter (`UUIDs`, `RSSI`, `DuplicateData`,
    /// `Pattern`, `Transport` `"le"`).
    public func setDiscoveryFilter(adapter: String, _ filter: DiscoveryFilter) async throws(BLEError) {
        var entries: [(key: DBusValue, value: DBusValue)] = [
            (.string("Transport"), .variant(.string(filter.transport))),
            (.string("DuplicateData"), .variant(.boolean(filter.duplicateData))),
        ]
        if !filter.uuids.isEmpty {
            entries.append(
                (.string("UUIDs"), .variant(.array(.string, filter.uuids.map { .string($0.uuidString) }))))
        }
        if let rssi = filter.rssi { entries.append((.string("RSSI"), .variant(.int16(Int16(clamping: rssi))))) }
        if let pattern = filter.pattern { entries.append((.string("Pattern"), .variant(.string(pattern)))) }
        _ = try await call(
            adapter, BlueZInterface.adapter, "SetDiscoveryFilter",
            [.dictionary(key: .string, value: .variant, entries)])
    }

    /// Adapter1.StartDiscovery.
    public func startDiscovery(adapter: String) async throws(BLEError) {
        _ = try await call(adapter, BlueZInterface.adapter, "StartDiscovery")
    }

    /// Adapter1.StopDiscovery.
    public func stopDiscovery(adapter: String) async throws(BLEError) {
        _ = try await call(adapter, BlueZInterface.adapter, "StopDiscovery")
    }

    /// Device1.Connect.
    public func connect(device: String) async throws(BLEError) {
        _ = try await call(device, BlueZInterface.device, "Connect", timeout: options.connectTimeout)
    }

    /// Device1.Disconnect; the device's fd sockets close with the link.
    public func disconnect(device: String) async throws(BLEError) {
        _ = try await call(device, BlueZInterface.device, "Disconnect")
    }
}
