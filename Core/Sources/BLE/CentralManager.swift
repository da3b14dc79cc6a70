import GATT
import IO
import Synchronization

/// The central role, in the image of `CBCentralManager`: scan, connect, and
/// reach peripherals' GATT databases, with async/await and async sequences in
/// place of a delegate. It is driven by a ``CentralBackend`` (BlueZ over
/// D-Bus, or a fake in tests) and keeps its own state: the object-tree mirror,
/// one shared discovery session, one operation queue per peripheral, and the
/// subscriptions it restores after each reconnect.
public final class CentralManager: Sendable {
    /// Settings.
    public struct Options: Sendable {
        /// The adapter to use (`/org/bluez/hci0`); nil for the first.
        public var adapter: String?
        /// Timing of GATT operations.
        public var operationPolicy: GATTOperationPolicy
        /// Bounds of the mirrored tree.
        public var mirrorLimits: ObjectTreeMirror.Limits
        /// How long connect and service discovery may take.
        public var connectTimeout: Duration
        /// Where to persist known peripherals, desired connections and
        /// subscriptions (a restore identifier under a state directory); nil
        /// for no state restoration.
        public var restoration: RestorationStore?
        /// How a wanted peripheral whose link dropped is connected again.
        public var reconnectPolicy: ReconnectPolicy

        /// Options; defaults as documented on each type.
        public init(
            adapter: String? = nil, operationPolicy: GATTOperationPolicy = .init(),
            mirrorLimits: ObjectTreeMirror.Limits = .init(), connectTimeout: Duration = .seconds(30),
            restoration: RestorationStore? = nil, reconnectPolicy: ReconnectPolicy = .init()
        ) {
            self.adapter = adapter
            self.operationPolicy = operationPolicy
            self.mirrorLimits = mirrorLimits
            self.connectTimeout = connectTimeout
            self.restoration = restoration
            self.reconnectPolicy = reconnectPolicy
        }
    }

    struct State: Sendable {
        var machine: ManagerStateMachine
        var mirror: ObjectTreeMirror
        var discovery = DiscoverySession()
        var subscriptions = SubscriptionSet()
        var queues: [String: OperationQueue] = [:]
        var runners: [OperationQueue.ID: Runner] = [:]
        var timers: [String: Task<Void, Never>] = [:]
        var scanners: [DiscoverySession.Token: Scanner] = [:]
        var desiredConnections: Set<PeripheralIdentifier> = []
        var peripheralStates: [PeripheralIdentifier: PeripheralState] = [:]
        var cannotSend: Set<String> = []
        var known: [PeripheralIdentifier: RestorationState.KnownPeripheral] = [:]
        var nextPrune: BLEInstant = .zero
        /// Device paths whose resolved services a snapshot has confirmed on the current link.
        var servicesSynced: Set<String> = []
        /// Device paths waiting for that snapshot: `mirror.snapshotsApplied` when it was asked
        /// for, and the D-Bus serial of the signal that said ServicesResolved (when known): only
        /// a reply bluetoothd sent after that signal is sure to hold the services.
        var servicesSyncRequested: [String: (applied: Int, afterSerial: UInt32?)] = [:]
        /// The D-Bus serial of the delta being handled (nil for other events or when unknown).
        var currentDeltaSerial: UInt32?
        var reconnects: [PeripheralIdentifier: Reconnect] = [:]
        var nextReconnectToken: UInt64 = 0
    }

    /// A running reconnect loop; the token tells a replaced loop from its successor.
    struct Reconnect: Sendable {
        var token: UInt64
        var task: Task<Void, Never>
    }

    struct Runner: Sendable {
        let start: @Sendable () async -> OperationQueue.Outcome
        let deliver: @Sendable () -> Void
        let fail: @Sendable (BLEError) -> Void
    }

    struct Scanner: Sendable {
        var filter: ScanFilter
        var continuation: AsyncStream<Discovery>.Continuation
        var reported: [PeripheralIdentifier: AdvertisementData] = [:]
    }

    let backend: any CentralBackend
    let clock: any BLEClock
    let options: Options
    let state: Mutex<State>
    let stateBroadcast = Broadcast<ManagerState>()
    let connectionBroadcast = Broadcast<ConnectionEvent>()
    let treeBroadcast = Broadcast<Void>()
    let notificationBroadcast = Broadcast<(CharacteristicReference, [UInt8])>()
    let flowBroadcast = Broadcast<String>()
    /// A subscription's start settled (confirmed or failed) on some link.
    let subscriptionBroadcast = Broadcast<CharacteristicReference>()
    /// Subscriptions turned on or off, by a caller or a restore.
    let notificationStateBroadcast = Broadcast<NotificationStateChange>()
    private let pump = Mutex<[Task<Void, Never>]>([])
    /// Writes the restoration state on the blocking pool (made at the first save).
    let persistence = Mutex<CoalescingWriter<Void>?>(nil)

    /// What state restoration found when the manager started (Core
    /// Bluetooth's will-restore-state): ``RestorationLoad/empty`` without a
    /// store or a saved state. A restored state's desired connections are
    /// connected again and its subscriptions restored once each link is up.
    public let restoredState: RestorationLoad
    private let discoveryCommands: AsyncStream<(adapter: String, action: DiscoverySession.Action)>.Continuation

    /// A manager over `backend`; it starts consuming the backend's events at once.
    public init(backend: any CentralBackend, options: Options = Options(), clock: any BLEClock = SystemBLEClock()) {
        self.backend = backend
        self.clock = clock
        self.options = options
        var initial = State(
            machine: ManagerStateMachine(preferredAdapter: options.adapter),
            mirror: ObjectTreeMirror(limits: options.mirrorLimits))
        let loaded: RestorationLoad
        do {
            loaded = try options.restoration?.load() ?? .empty
        } catch {
            loaded = .corrupt(reason: error.description, preservedAt: options.restoration?.path ?? "")
        }
        if case .restored(let saved) = loaded {
            initial.desiredConnections = Set(saved.desiredConnections)
            for reference in saved.subscriptions { _ = initial.subscriptions.subscribe(reference) }
            initial.known = Dictionary(saved.knownPeripherals.map { ($0.identifier, $0) }, uniquingKeysWith: { $1 })
        }
        self.restoredState = loaded
        self.state = Mutex(initial)
        let (commands, commandSink) = AsyncStream<(adapter: String, action: DiscoverySession.Action)>.makeStream()
        self.discoveryCommands = commandSink
        let events = backend.events
        let eventTask = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                self.handle(event)
            }
        }
        let commandTask = Task {
            for await (adapter, action) in commands {
                switch action {
                case .setFilter(let filter): try? await backend.setDiscoveryFilter(adapter: adapter, filter)
                case .start: try? await backend.startDiscovery(adapter: adapter)
                case .stop: try? await backend.stopDiscovery(adapter: adapter)
                }
            }
        }
        pump.withLock { $0 = [eventTask, commandTask] }
    }

    deinit {
        discoveryCommands.finish()
        pump.withLock { tasks in tasks.forEach { $0.cancel() } }
    }

    /// The current state.
    public var currentState: ManagerState { state.withLock { $0.machine.state } }

    /// The state now and every change after, as a stream.
    public func stateUpdates() -> AsyncStream<ManagerState> {
        stateBroadcast.stream(current: { currentState })
    }

    /// Connection events for every peripheral.
    public func connectionEvents() -> AsyncStream<ConnectionEvent> {
        connectionBroadcast.stream()
    }

    /// Starts scanning; discoveries arrive on the returned stream, each
    /// peripheral once unless its advertisement changes (or every time with
    /// ``ScanOptions/allowDuplicates``). Ending the stream's iteration (or
    /// ``stopScan()``) stops this scan; BlueZ discovery stops with the last scan.
    ///
    /// - Throws: the state's refusal unless poweredOn.
    public func scanForPeripherals(
        withServices services: [BluetoothUUID]? = nil, options: ScanOptions = ScanOptions()
    ) throws(BLEError) -> AsyncStream<Discovery> {
        let (stream, continuation) = AsyncStream<Discovery>.makeStream(bufferingPolicy: .unbounded)
        let filter = ScanFilter(services: services, options: options)
        let token: DiscoverySession.Token = try state.withLock { state throws(BLEError) in
            if let refusal = state.machine.state.refusal { throw refusal }
            let (token, actions) = state.discovery.add(filter)
            state.scanners[token] = Scanner(filter: filter, continuation: continuation)
            perform(actions, adapter: state.machine.adapterPath)
            return token
        }
        continuation.onTermination = { [weak self] _ in self?.endScan(token) }
        return stream
    }

    /// Stops every scan and ends their streams.
    public func stopScan() {
        let continuations = state.withLock { state in state.scanners.values.map(\.continuation) }
        for continuation in continuations { continuation.finish() }
    }

    /// Whether any scan is running.
    public var isScanning: Bool { state.withLock { $0.discovery.isActive } }

    /// The peripherals with these identifiers that the mirror knows.
    public func retrievePeripherals(withIdentifiers identifiers: [PeripheralIdentifier]) -> [Peripheral] {
        let known = state.withLock { state in
            Set(state.mirror.devices.compactMap { state.mirror.identifier(ofDeviceAt: $0.path) })
        }
        return identifiers.filter { known.contains($0) }.map { Peripheral(identifier: $0, central: self) }
    }

    /// The connected peripherals offering any of `services` (all connected ones for an empty list).
    public func retrieveConnectedPeripherals(withServices services: [BluetoothUUID]) -> [Peripheral] {
        let ids = state.withLock { state in
            state.mirror.devices.filter { device in
                device.connected
                    && (services.isEmpty
                        || !Set(services).isDisjoint(with: state.mirror.services(ofDeviceAt: device.path).map(\.uuid)))
            }.compactMap { state.mirror.identifier(ofDeviceAt: $0.path) }
        }
        return ids.map { Peripheral(identifier: $0, central: self) }
    }

    /// Connects `peripheral` (Device1.Connect) and keeps it wanted: after a
    /// link loss, a bluetoothd restart or a power cycle it is connected again.
    public func connect(_ peripheral: Peripheral) async throws(BLEError) {
        let id = peripheral.identifier
        let path: String = try state.withLock { state throws(BLEError) in
            if let refusal = state.machine.state.refusal { throw refusal }
            guard let path = state.mirror.devicePath(for: id) else {
                throw BLEError(.notConnected, message: "unknown peripheral")
            }
            state.desiredConnections.insert(id)
            state.peripheralStates[id] = .connecting
            return path
        }
        try await persist()
        do throws(BLEError) {
            try await backend.connect(device: path)
        } catch {
            let failure = BLEError(.connectionFailed, bluezError: error.bluezError, message: error.message)
            state.withLock { $0.peripheralStates[id] = .disconnected }
            connectionBroadcast.yield(.failedToConnect(id, failure))
            throw failure
        }
    }

    /// Disconnects `peripheral` (Device1.Disconnect) and stops wanting it connected.
    public func cancelConnection(_ peripheral: Peripheral) async throws(BLEError) {
        let id = peripheral.identifier
        let path = state.withLock { state -> String? in
            state.desiredConnections.remove(id)
            state.reconnects.removeValue(forKey: id)?.task.cancel()
            guard let path = state.mirror.devicePath(for: id) else { return nil }
            if state.peripheralStates[id] == .connected { state.peripheralStates[id] = .disconnecting }
            return path
        }
        try await persist()
        guard let path else { return }
        try await backend.disconnect(device: path)
    }

    func endScan(_ token: DiscoverySession.Token) {
        state.withLock { state in
            state.scanners[token] = nil
            perform(state.discovery.remove(token), adapter: state.machine.adapterPath)
        }
    }

    /// Sends discovery calls to BlueZ one after another, in the order
    /// decided; called under the state lock so the order is the decision order.
    func perform(_ actions: [DiscoverySession.Action], adapter: String?) {
        guard let adapter else { return }
        for action in actions { discoveryCommands.yield((adapter, action)) }
    }
}
