import BLE
import DBus
import GATT
import Synchronization

/// The ``PeripheralBackend`` over bluetoothd's D-Bus API (BlueZ 5.66
/// doc/gatt-api.txt, doc/advertising-api.txt).
///
/// - One GATT application: an ObjectManager at `<root>/app<n>` with
///   GattService1 / GattCharacteristic1 / GattDescriptor1 objects
///   (``GATTApplicationLayout``), registered with
///   `GattManager1.RegisterApplication` (bluetoothd reads our
///   GetManagedObjects before it replies), and on every change unregistered
///   and registered again whole under a new `<n>`.
/// - ReadValue / WriteValue become ``PeripheralBackendEvent/request(_:)``;
///   ``respond(to:with:)`` answers the pending D-Bus call, errors through
///   ``BlueZATTErrorMapping/applicationError(for:access:)``.
/// - StartNotify / StopNotify become subscribe / unsubscribe. bluetoothd
///   5.66 calls StartNotify with no arguments on every enabling CCC write
///   (any central) and StopNotify only when the last one disables: the
///   subscriber is not known, so events name ``unidentifiedCentral(adapterAddress:)``
///   with the minimum MTU, and one unsubscribe follows the last central leaving.
/// - Notifications and indications set the characteristic's `Value`
///   (PropertiesChanged); bluetoothd sends them to every subscribed central
///   (the `centrals` filter cannot be honoured). Indications are confirmed
///   through `Confirm`. AcquireNotify / AcquireWrite are not offered.
/// - One advertisement (LEAdvertisement1 at `<root>/advertisement<n>`),
///   registered with `LEAdvertisingManager1.RegisterAdvertisement`;
///   ``shutdown()`` unregisters it and the application, and bluetoothd
///   drops both by itself when our connection closes (process exit).
/// - Exported objects answer only bluetoothd's current unique name; any other
///   caller gets `org.freedesktop.DBus.Error.AccessDenied`.
/// - bluetoothd leaving and returning (NameOwnerChanged) is reported as
///   `bluetoothdPresent(false/true)` and a fresh `adapters` list; the
///   ``PeripheralManager`` then registers the application and advertisement
///   again.
public final class BlueZPeripheralBackend: PeripheralBackend {
    /// Settings.
    public struct Options: Sendable {
        /// bluetoothd's well-known name.
        public var service: String
        /// Where our objects are exported.
        public var root: ObjectPath
        /// How many notifications or unconfirmed indications may be in flight.
        public var transmitQueueLimit: Int
        /// How long an indication waits for `Confirm` before its slot is freed.
        public var indicationDeadline: Duration

        /// Options; by default `org.bluez`, `/org/bleagent/peripheral`, 16 in flight, 30 s.
        public init(
            service: String = "org.bluez", root: ObjectPath? = nil, transmitQueueLimit: Int = 16,
            indicationDeadline: Duration = .seconds(30)
        ) {
            self.service = service
            self.root = root ?? Self.defaultRoot
            self.transmitQueueLimit = transmitQueueLimit
            self.indicationDeadline = indicationDeadline
        }

        static let defaultRoot: ObjectPath = {
            var path = ObjectPath.root
            for element in ["org", "bleagent", "peripheral"] {
                if let next = try? path.appending(element) { path = next }
            }
            return path
        }()
    }

    struct Application {
        var adapter: String
        var layout: GATTApplicationLayout
        var registered: Bool
    }

    struct Advertisement {
        var adapter: String
        var path: ObjectPath
        var registered: Bool
    }

    struct Pending {
        var continuation: CheckedContinuation<[DBusValue], any Error>
        var access: BlueZATTErrorMapping.Access
    }

    struct State {
        var bluetoothd: String?
        var application: Application?
        var advertisement: Advertisement?
        var generation = 0
        var nextRequest: UInt64 = 1
        var pending: [UInt64: Pending] = [:]
        var window: NotificationWindow
        var nextToken: UInt64 = 1
        var unconfirmed: [ObjectPath: [UInt64]] = [:]
        var notifying: [LocalCharacteristic: Int] = [:]
        var centrals: [ObjectPath: PeripheralIdentifier] = [:]
        var adapterAddresses: [String: String] = [:]
    }

    /// The events, consumed by one manager.
    public let events: AsyncStream<PeripheralBackendEvent>
    /// The connection our objects live on.
    public let connection: DBusConnection
    let options: Options
    let state: Mutex<State>
    let continuation: AsyncStream<PeripheralBackendEvent>.Continuation
    let registrations = AsyncLock()
    let watchers = Mutex<[Task<Void, Never>]>([])
    /// The task asking the current bluetoothd for its adapters (``loadAdapters(of:)``).
    let adapterLoad = Mutex<Task<Void, Never>?>(nil)

    static let gattManager = "org.bluez.GattManager1"
    static let advertisingManager = "org.bluez.LEAdvertisingManager1"
    static let characteristicInterface = "org.bluez.GattCharacteristic1"

    private init(connection: DBusConnection, options: Options) {
        self.connection = connection
        self.options = options
        state = Mutex(State(window: NotificationWindow(limit: options.transmitQueueLimit)))
        (events, continuation) = AsyncStream.makeStream(of: PeripheralBackendEvent.self)
    }

    /// A backend on `connection` (nil: the system bus, honouring
    /// `DBUS_SYSTEM_BUS_ADDRESS`). It watches bluetoothd before looking for it,
    /// so its first events say whether bluetoothd is there and list the adapters.
    public static func start(
        connection: DBusConnection? = nil, options: Options = Options()
    ) async throws(BLEError) -> BlueZPeripheralBackend {
        let bus: DBusConnection
        do {
            if let connection { bus = connection } else { bus = try await DBusConnection.system() }
        } catch {
            throw PeripheralErrors.bleError(error, doing: "connecting to the system bus")
        }
        let backend = BlueZPeripheralBackend(connection: bus, options: options)
        do {
            try await backend.watch()
        } catch {
            throw PeripheralErrors.bleError(error, doing: "watching bluetoothd")
        }
        return backend
    }

    /// The identifier subscription events carry: bluetoothd 5.66 does not say
    /// which central enabled notifications (StartNotify has no options).
    public static func unidentifiedCentral(adapterAddress: String) -> PeripheralIdentifier {
        PeripheralIdentifier(adapter: adapterAddress, address: "00:00:00:00:00:00", addressType: .public)
    }

    /// Unregisters the advertisement and the application, closes the links
    /// of the centrals it served (Device1.Disconnect on each device a
    /// request named; errors such as NotConnected ignored), stops watching
    /// and ends ``events``. Call it on every orderly exit.
    public func shutdown() async {
        let adapters = state.withLock { ($0.advertisement?.adapter, $0.application?.adapter) }
        if let adapter = adapters.0 { try? await unregisterAdvertisement(adapter: adapter) }
        if let adapter = adapters.1 { try? await setApplication(adapter: adapter, services: []) }
        let centrals = state.withLock { $0.centrals.keys.sorted { $0.rawValue < $1.rawValue } }
        for device in centrals {
            _ = try? await callBluetoothd(device, "org.bluez.Device1", "Disconnect", [])
        }
        for task in watchers.withLock({ $0 }) { task.cancel() }
        adapterLoad.withLock { $0?.cancel() }
        continuation.finish()
    }

    /// Whether `sender` is bluetoothd's current unique name (the authorize hook).
    func isBluetoothd(_ sender: String) -> Bool {
        state.withLock { $0.bluetoothd } == sender
    }

    var authorizer: ObjectServer.Authorizer {
        { [weak self] sender in self?.isBluetoothd(sender) ?? false }
    }

    // MARK: PeripheralBackend

    /// Exports `services` as a new application and registers it, after
    /// unregistering and withdrawing the previous one; empty: only withdraws.
    public func setApplication(adapter: String, services: [GATTService]) async throws(BLEError) {
        try await registrations.run { () throws(BLEError) in
            try await replaceApplication(adapter: adapter, services: services)
        }
    }

    /// Exports the advertisement and registers it (replacing any previous one).
    public func registerAdvertisement(
        adapter: String, _ advertisement: AdvertisingData, extended: Bool
    ) async throws(BLEError) {
        try await registrations.run { () throws(BLEError) in
            await withdrawAdvertisement()
            try await exportAndRegister(adapter: adapter, advertisement, extended: extended)
        }
    }

    /// Unregisters the advertisement and removes its object.
    public func unregisterAdvertisement(adapter: String) async throws(BLEError) {
        try await registrations.run { () throws(BLEError) in await withdrawAdvertisement() }
    }

    /// Answers the pending ReadValue / WriteValue `id` (once; later answers do nothing).
    public func respond(to id: ATTRequestID, with result: Result<[UInt8], ATTError>) {
        guard let pending = state.withLock({ $0.pending.removeValue(forKey: id.rawValue) }) else { return }
        switch result {
        case .success(let bytes):
            pending.continuation.resume(returning: pending.access == .read ? [.bytes(bytes)] : [])
        case .failure(let error):
            pending.continuation.resume(throwing: PeripheralErrors.reply(for: error, access: pending.access))
        }
    }

    /// Sets the characteristic's `Value` (bluetoothd notifies or indicates every
    /// subscribed central). False when ``Options/transmitQueueLimit`` updates are
    /// in flight; ``PeripheralBackendEvent/readyToUpdate`` follows when one
    /// completes. An unknown characteristic is ignored (true).
    public func updateValue(
        _ value: [UInt8], for characteristic: LocalCharacteristic, centrals: [PeripheralIdentifier]?
    ) -> Bool {
        enum Outcome { case unknown, full, sent(ObjectPath, token: UInt64?) }
        let outcome = state.withLock { state -> Outcome in
            guard let entry = state.application?.layout.characteristic(characteristic) else { return .unknown }
            guard state.window.take() else { return .full }
            let properties = entry.characteristic.properties
            let indicates = properties.contains(.indicate) && !properties.contains(.notify)
            guard indicates, state.notifying[characteristic, default: 0] > 0 else {
                return .sent(entry.path, token: nil)
            }
            let token = state.nextToken
            state.nextToken += 1
            state.unconfirmed[entry.path, default: []].append(token)
            return .sent(entry.path, token: token)
        }
        switch outcome {
        case .unknown: return true
        case .full: return false
        case .sent(let path, let token):
            do {
                // Each value is a notification of its own, sent at once even while a call from bluetoothd is
                // being handled (held until its reply, two would fold into one with the later value).
                try connection.objects.setPropertiesNow(
                    [("Value", .bytes(value))], interface: Self.characteristicInterface, at: path)
            } catch {
                if let token { _ = state.withLock { $0.unconfirmed[path]?.removeAll { $0 == token } } }
                releaseSlot()
                return true
            }
            guard let token else {
                releaseAfterFlush()
                return true
            }
            let connection = self.connection
            let deadline = options.indicationDeadline
            Task { [weak self] in
                await connection.flush()
                try? await Task.sleep(for: deadline)
                self?.confirmationMissed(path: path, token: token)
            }
            return true
        }
    }

    func releaseSlot() {
        if state.withLock({ $0.window.release() }) { continuation.yield(.readyToUpdate) }
    }

    /// A notification was queued on the connection: its slot is released once the connection has written it, by
    /// the connection's own thread (no task per notification).
    private func releaseAfterFlush() {
        connection.whenWritten { [weak self] in self?.releaseSlot() }
    }

    /// bluetoothd's `Confirm`: the oldest indication of `path` was acknowledged.
    func confirmed(path: ObjectPath) {
        let released = state.withLock { state -> Bool in
            guard var tokens = state.unconfirmed[path], !tokens.isEmpty else { return false }
            tokens.removeFirst()
            state.unconfirmed[path] = tokens
            return true
        }
        if released { releaseSlot() }
    }

    private func confirmationMissed(path: ObjectPath, token: UInt64) {
        let released = state.withLock { state -> Bool in
            guard let index = state.unconfirmed[path]?.firstIndex(of: token) else { return false }
            state.unconfirmed[path]?.remove(at: index)
            return true
        }
        if released { releaseSlot() }
    }

    /// Fails every pending request (its objects are gone, or bluetoothd is).
    func failPending(_ reason: String) {
        let pending = state.withLock { state -> [Pending] in
            defer { state.pending.removeAll() }
            return Array(state.pending.values)
        }
        for entry in pending { entry.continuation.resume(throwing: DBusError(.failed, reason)) }
    }
}
