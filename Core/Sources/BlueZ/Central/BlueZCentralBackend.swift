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
/// GetManagedObjects when bluetoothd is present. Both subscriptions are
/// handled on the connection's own thread (``DBusConnection/handleSignals(_:batchEnded:handler:)``):
/// each signal is decoded straight from the message and handed through an
/// ``EventGate`` (bus order, serials: nothing lost, nothing doubled) to the
/// manager, with no buffer and no task hop in between; a manager that falls
/// behind slows the reading of the bus. Every failed
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

    /// The connection used.
    public let connection: DBusConnection
    /// The options.
    public let options: Options
    let gate: EventGate
    let sockets: SocketTable
    let loop: SocketLoop
    /// The advertisement monitors of passive scans, and their applications.
    let monitors: MonitorApplications
    private let subscriptions = Mutex<[DBusSignalHandler]>([])

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
        let gate = EventGate()
        self.gate = gate
        let table = SocketTable()
        self.sockets = table
        let loop = SocketLoop { event in Self.socketEvent(event, gate: gate, sockets: table) }
        self.loop = loop
        let monitors = MonitorApplications()
        self.monitors = monitors
        let owners: DBusSignalHandler
        let signals: DBusSignalHandler
        let initialOwner: String?
        do {
            owners = try await connection.handleSignals(.nameOwnerChanged(of: BlueZNames.service)) { signal in
                guard let change = NameOwnerChange(signal: signal), change.name == BlueZNames.service else { return }
                if gate.ownerChanged(from: change.oldOwner, to: change.newOwner) {
                    Self.forgetSockets(sockets: table, loop: loop)
                    monitors.bluetoothdChanged()
                }
            }
            signals = try await connection.handleSignals(
                MatchRule(sender: BlueZNames.service), batchEnded: { gate.batchEnded() }
            ) { signal in
                guard let delta = BlueZDecoding.delta(of: signal) else { return }
                gate.signal(delta, sender: signal.sender, serial: signal.serial)
                if case .interfacesRemoved(let path, let interfaces) = delta,
                    interfaces.contains(BlueZInterface.gattCharacteristic)
                {
                    Self.forget(characteristic: path, sockets: table, loop: loop)
                }
            }
            initialOwner = try await connection.getNameOwner(BlueZNames.service)
        } catch {
            loop.stop()
            throw BLEError(callFailure: error)
        }
        if let initialOwner { gate.ownerChanged(from: nil, to: initialOwner) } else { gate.initiallyAbsent() }
        subscriptions.withLock { $0 = [owners, signals] }
    }

    deinit {
        subscriptions.withLock { $0.forEach { $0.cancel() } }
        loop.stop()
    }

    /// Starts delivering events to the manager's `receiver`.
    public func attach(_ receiver: CentralEventReceiver) {
        gate.attach(receiver)
    }

    /// Stops following bluetoothd: closes the fd sockets and stops delivering
    /// events (the connection stays open; close it yourself).
    public func stop() {
        subscriptions.withLock { $0.forEach { $0.cancel() } }
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
        guard reply.signature.rawValue == "a{oa{sa{sv}}}" else {
            throw BLEError(.failed, message: "GetManagedObjects replied \(reply.signature)")
        }
        let tree = reply.withBodyReader { BlueZDecoding.managedObjects(reading: $0) }
        gate.snapshot(tree, sender: reply.sender, serial: reply.serial)
    }

    /// Properties.GetAll, fed as InterfacesAdded.
    public func refresh(path: String, interface: String) async throws(BLEError) {
        let reply = try await call(path, BlueZNames.properties, "GetAll", [.string(interface)])
        let properties = reply.withBodyReader { BlueZDecoding.properties(reading: $0) }
        gate.refreshed(path: path, interface: interface, properties: properties, sender: reply.sender)
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
