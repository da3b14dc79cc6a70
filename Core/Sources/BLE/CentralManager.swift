import GATT
import IO
import Synchronization

/// The central role, in the image of `CBCentralManager`: scan, connect, and
/// reach peripherals' GATT databases, with async/await and async sequences in
/// place of a delegate. It is driven by a ``CentralBackend`` (BlueZ over
/// D-Bus, or a fake in tests) and keeps its own state: the object-tree mirror,
/// one shared discovery session, one operation queue per peripheral, and the
/// subscriptions it restores after each reconnect.
///
/// The backend hands it each event synchronously (no queue in between); the
/// manager applies it to the mirror in time proportional to the event and
/// puts what consumers need in their bounded queues, waking them once per
/// batch of events. It sees, reports and drives only the devices of its
/// adapter (``Options/adapter``). Every queue and stream it feeds has a bound, an
/// overflow policy and a counter (``statistics``).
public final class CentralManager: Sendable {
    /// Settings.
    public struct Options: Sendable {
        /// The name of the adapter to use, as users name it (`hci1`); nil
        /// for the first by name. The backend maps the name to its own
        /// identifier (BlueZ: the object path `/org/bluez/hci1`); a name no
        /// adapter has leaves the manager ``ManagerState/unsupported``.
        public var adapter: String?
        /// Timing of GATT operations.
        public var operationPolicy: GATTOperationPolicy
        /// Bounds of the mirrored tree.
        public var mirrorLimits: ObjectTreeMirror.Limits
        /// How many discoveries each scan's queue holds (one per peripheral
        /// at most; see ``DiscoveryStream``).
        public var scanQueueCapacity: Int
        /// How many values each notification stream holds (see ``NotificationStream``).
        public var notificationQueueCapacity: Int
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
            restoration: RestorationStore? = nil, reconnectPolicy: ReconnectPolicy = .init(),
            scanQueueCapacity: Int? = nil, notificationQueueCapacity: Int = 1024
        ) {
            self.adapter = adapter
            self.operationPolicy = operationPolicy
            self.mirrorLimits = mirrorLimits
            self.scanQueueCapacity = max(1, scanQueueCapacity ?? mirrorLimits.maximumDevices)
            self.notificationQueueCapacity = max(2, notificationQueueCapacity)
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
        var refreshes = RefreshQueue()
        var refreshTasks: [RefreshQueue.Request: Task<Void, Never>] = [:]
        var snapshotRequest = SnapshotRequest()
        var pruneTimer: (deadline: BLEInstant, task: Task<Void, Never>)?
        var notifications = NotificationRoutes()
        /// Wake-ups of consumers owed at the end of the backend's batch.
        var wakes: [@Sendable () -> Void] = []
        var statistics = CentralStatistics()
    }

    /// GetManagedObjects calls: one at a time, a second request while one is
    /// on its way runs after it.
    struct SnapshotRequest: Sendable {
        var running: Task<Void, Never>?
        var again = false
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

    typealias ScanQueue = AsyncQueue<CoalescingBuffer<PeripheralIdentifier, Discovery>>

    struct Scanner: Sendable {
        var filter: ScanFilter
        let queue: AsyncQueue<CoalescingBuffer<PeripheralIdentifier, Discovery>>
        let ending: ScanEnding
        let mode: ScanModeCell
        /// While the scan is passive (or waiting for its monitor): the device paths its monitor
        /// found (DeviceFound), the only ones it reports; nil for a scan served by discovery.
        /// Entries go with the device or at DeviceLost, so it is bounded like the mirror.
        var found: Set<String>?
        /// Which advertisement was last reported per device path (without duplicates only): the device's
        /// ``DeviceEntry/advertisementVersion``; entries go with the device, so it is bounded like the mirror.
        var reported: [String: UInt64] = [:]

        /// The queue's counters once it ends (nothing waits any more).
        var endedCounters: QueueCounters {
            var counters = queue.counters
            counters.waiting = 0
            return counters
        }

        /// Whether a report of `device` (at `path`, its advertisement at `version`) goes to this scan: it passes
        /// the filter and, without duplicates, its advertisement changed since it was last reported for the path
        /// (then recorded). Called in place (`scanners[token]?.admits(...)`), so `reported` is updated without a
        /// copy.
        mutating func admits(_ device: DeviceModel, version: UInt64, at path: String) -> Bool {
            if let found, !found.contains(path) { return false }
            guard filter.matches(address: device.address, rssi: device.rssi, advertisement: device.advertisement)
            else { return false }
            guard !filter.options.allowDuplicates else { return true }
            return reported.updateValue(version, forKey: path) != version
        }

        /// The queue to put a report of `device` in when it ``admits(_:version:at:)`` it, else nil. Called in
        /// place too: reading `queue` through the table's getter would copy the whole scanner.
        mutating func queue(
            admitting device: DeviceModel, version: UInt64, at path: String
        ) -> AsyncQueue<CoalescingBuffer<PeripheralIdentifier, Discovery>>? {
            admits(device, version: version, at: path) ? queue : nil
        }
    }

    let backend: any CentralBackend
    let clock: any BLEClock
    let options: Options
    let state: Mutex<State>
    let stateBroadcast = Broadcast<ManagerState>(capacity: 64)
    let connectionBroadcast = Broadcast<ConnectionEvent>(capacity: 1024)
    /// "The tree changed": a waiter only looks again, so one pending value is enough.
    let treeBroadcast = Broadcast<Void>(capacity: 1)
    let flowBroadcast = Broadcast<String>(capacity: 64)
    /// A subscription's start settled (confirmed or failed) on some link.
    let subscriptionBroadcast = Broadcast<CharacteristicReference>(capacity: 256)
    /// Subscriptions turned on or off, by a caller or a restore.
    let notificationStateBroadcast = Broadcast<NotificationStateChange>(capacity: 256)
    private let pump = Mutex<[Task<Void, Never>]>([])
    /// Writes the restoration state on the blocking pool (made at the first save).
    let persistence = Mutex<CoalescingWriter<Void>?>(nil)

    /// What state restoration found when the manager started (Core
    /// Bluetooth's will-restore-state): ``RestorationLoad/empty`` without a
    /// store or a saved state. A restored state's desired connections are
    /// connected again and its subscriptions restored once each link is up.
    public let restoredState: RestorationLoad
    private let discoveryCommands: AsyncStream<BackendCommand>.Continuation
    /// Discovery and monitor calls dropped because 1,024 were waiting for BlueZ.
    let droppedDiscoveryCommands = Atomic<Int>(0)

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
        let (commands, commandSink) = AsyncStream<BackendCommand>.makeStream(bufferingPolicy: .bufferingOldest(1024))
        self.discoveryCommands = commandSink
        let commandTask = Task { [weak self] in
            for await command in commands {
                switch command {
                case .discovery(let adapter, .setFilter(let filter)):
                    try? await backend.setDiscoveryFilter(adapter: adapter, filter)
                case .discovery(let adapter, .start): try? await backend.startDiscovery(adapter: adapter)
                case .discovery(let adapter, .stop): try? await backend.stopDiscovery(adapter: adapter)
                case .registerMonitor(let adapter, let scan, let monitor):
                    do throws(BLEError) {
                        try await backend.registerMonitor(adapter: adapter, scan: scan, monitor)
                    } catch {
                        self?.monitorFailed(scan, reason: error.message ?? "\(error)")
                    }
                case .unregisterMonitor(let scan): await backend.unregisterMonitor(scan: scan)
                }
            }
        }
        pump.withLock { $0 = [commandTask] }
        backend.attach(
            CentralEventReceiver(
                receive: { [weak self] event in self?.handle(event) },
                batchEnded: { [weak self] in self?.wakeConsumers() }))
    }

    deinit {
        discoveryCommands.finish()
        pump.withLock { tasks in tasks.forEach { $0.cancel() } }
        let queues = state.withLock { state in
            state.refreshTasks.values.forEach { $0.cancel() }
            state.snapshotRequest.running?.cancel()
            state.pruneTimer?.task.cancel()
            return state.scanners.values.map { scanner in
                scanner.ending.set(.managerClosed)
                return scanner.queue
            }
        }
        queues.forEach { $0.finish() }
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
    /// ``ScanOptions/allowDuplicates``). Only devices of the manager's adapter
    /// are reported. A consumer that falls behind gets each peripheral's
    /// newest report with the count it stands for (``DiscoveryStream``).
    /// Ending the stream's iteration (or ``stopScan()``) stops this scan;
    /// BlueZ discovery stops with the last scan. The stream also ends when the
    /// manager leaves poweredOn (adapter off, bluetoothd gone, adapter gone):
    /// ``DiscoveryStream/end`` says why; ``scanWhilePoweredOn(withServices:options:onChange:_:)``
    /// scans again when it can.
    ///
    /// - Throws: the state's refusal unless poweredOn.
    public func scanForPeripherals(
        withServices services: [BluetoothUUID]? = nil, options: ScanOptions = ScanOptions()
    ) throws(BLEError) -> DiscoveryStream {
        let capacity = self.options.scanQueueCapacity
        let queue = AsyncQueue(CoalescingBuffer<PeripheralIdentifier, Discovery>(capacity: capacity))
        let filter = ScanFilter(services: services, options: options)
        let ending = ScanEnding()
        if let monitor = options.monitor, monitor.patterns.isEmpty {
            throw BLEError(.failed, message: "an advertisement monitor needs at least one pattern")
        }
        let mode = ScanModeCell(options.monitor == nil ? .active : .passivePending)
        let token: DiscoverySession.Token = try state.withLock { state throws(BLEError) in
            if let refusal = state.machine.state.refusal { throw refusal }
            let (token, actions) = state.discovery.add(filter, passive: options.monitor != nil)
            state.scanners[token] = Scanner(
                filter: filter, queue: queue, ending: ending, mode: mode, found: options.monitor.map { _ in [] })
            perform(actions, adapter: state.machine.adapterID)
            if let monitor = options.monitor, let adapter = state.machine.adapterID {
                send(.registerMonitor(adapter: adapter, scan: token, monitor))
            }
            return token
        }
        queue.setOnTermination { [weak self] in
            ending.set(.stopped)
            self?.endScan(token)
        }
        return DiscoveryStream(
            queue: queue, lifetime: QueueLifetime { queue.finish() }, ending: ending, modeCell: mode, capacity: capacity
        )
    }

    /// Stops every scan and ends their streams (``ScanEnd/stopped``).
    public func stopScan() {
        let queues = state.withLock { state in
            state.scanners.values.map { scanner in
                scanner.ending.set(.stopped)
                return scanner.queue
            }
        }
        for queue in queues { queue.finish() }
    }

    /// Whether any scan is running.
    public var isScanning: Bool { state.withLock { $0.discovery.hasScanners } }

    /// The peripherals with these identifiers that the mirror knows under the manager's adapter.
    public func retrievePeripherals(withIdentifiers identifiers: [PeripheralIdentifier]) -> [Peripheral] {
        let known = state.withLock { state in identifiers.filter { state.devicePath(for: $0) != nil } }
        return known.map { Peripheral(identifier: $0, central: self) }
    }

    /// The connected peripherals of the manager's adapter offering any of
    /// `services` (all connected ones for an empty list).
    public func retrieveConnectedPeripherals(withServices services: [BluetoothUUID]) -> [Peripheral] {
        let wanted = Set(services)
        let ids = state.withLock { state in
            state.mirror.connectedDevices.filter { device in
                state.isInScope(device)
                    && (wanted.isEmpty
                        || !wanted.isDisjoint(with: state.mirror.services(ofDeviceAt: device.path).map(\.uuid)))
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
            guard let path = state.devicePath(for: id) else {
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
        if !linkConfirmed(path) { scheduleReconnect(id, after: options.reconnectPolicy.firstDelay) }
    }

    /// After Device1.Connect answered: whether the mirror shows the link up.
    /// When it does not, asks for a snapshot. bluetoothd 5.66 can bring a
    /// link up without signalling Connected: when its ATT channel connects
    /// before the kernel reports the connection, `att_connect_cb` marks the
    /// bearer connected silently and the kernel's event is then dropped as
    /// "already connected" (device.c; seen in the VM). GetManagedObjects
    /// shows the link, and the snapshot applies it in order with the signals.
    /// The caller then watches the link with the reconnect loop, which ends
    /// once the link shows and connects again if it went down meanwhile.
    func linkConfirmed(_ path: String) -> Bool {
        let shown = state.withLock { $0.mirror.device(at: path)?.connected ?? false }
        if !shown { requestSnapshot() }
        return shown
    }

    /// Disconnects `peripheral` (Device1.Disconnect) and stops wanting it connected.
    public func cancelConnection(_ peripheral: Peripheral) async throws(BLEError) {
        let id = peripheral.identifier
        let path = state.withLock { state -> String? in
            state.desiredConnections.remove(id)
            state.reconnects.removeValue(forKey: id)?.task.cancel()
            guard let path = state.devicePath(for: id) else { return nil }
            if state.peripheralStates[id] == .connected { state.peripheralStates[id] = .disconnecting }
            return path
        }
        try await persist()
        guard let path else { return }
        try await backend.disconnect(device: path)
    }

    func endScan(_ token: DiscoverySession.Token) {
        state.withLock { state in
            guard let scanner = state.scanners.removeValue(forKey: token) else { return }
            state.statistics.scans = state.statistics.scans + scanner.endedCounters
            perform(state.discovery.remove(token), adapter: state.machine.adapterID)
            if scanner.filter.options.monitor != nil { send(.unregisterMonitor(scan: token)) }
        }
    }

    /// Ends every scan because the manager left poweredOn for `managerState`
    /// (BlueZ forgot the discovery: nothing is sent); returns their queues, to
    /// finish once the state lock is released.
    func endScans(leavingPoweredOnFor managerState: ManagerState, state: inout State) -> [ScanQueue] {
        let end = ScanEnd(leavingPoweredOnFor: managerState)
        let scanners = state.scanners
        state.scanners = [:]
        state.discovery = DiscoverySession(continuingAfter: state.discovery)
        for (token, scanner) in scanners where scanner.filter.options.monitor != nil {
            send(.unregisterMonitor(scan: token))
        }
        return scanners.values.map { scanner in
            scanner.ending.set(end)
            state.statistics.scans = state.statistics.scans + scanner.endedCounters
            return scanner.queue
        }
    }

    /// Sends discovery calls to BlueZ one after another, in the order
    /// decided; called under the state lock so the order is the decision order.
    func perform(_ actions: [DiscoverySession.Action], adapter: String?) {
        guard let adapter else { return }
        for action in actions { send(.discovery(adapter: adapter, action)) }
    }

    /// Queues one call for BlueZ behind the earlier ones (under the state lock, so in decision order).
    func send(_ command: BackendCommand) {
        if case .dropped = discoveryCommands.yield(command) {
            droppedDiscoveryCommands.wrappingAdd(1, ordering: .relaxed)
        }
    }
}

extension CentralManager.State {
    /// Whether `device` belongs to the manager's adapter.
    func isInScope(_ device: DeviceModel) -> Bool {
        machine.adapterID != nil && device.adapterPath == machine.adapterID
    }

    /// The path of the device `id` names, if the mirror holds it under the manager's adapter.
    func devicePath(for id: PeripheralIdentifier) -> String? {
        guard let path = mirror.devicePath(for: id), let device = mirror.device(at: path), isInScope(device) else {
            return nil
        }
        return path
    }

    /// The device at `path`, if it is complete and of the manager's adapter.
    func scopedDevice(at path: String) -> DeviceModel? {
        guard let device = mirror.device(at: path), isInScope(device) else { return nil }
        return device
    }

    /// The open scans' tokens, apart from the scans: iterating `scanners.keys` while a scan
    /// changes would copy the scanners (and each one's `reported` map).
    var scannerTokens: [DiscoverySession.Token] { Array(scanners.keys) }

    /// The device at `path` left the mirror: no scan remembers what it last reported.
    mutating func forgetReports(of path: String) {
        for token in scannerTokens {
            scanners[token]?.reported[path] = nil
            scanners[token]?.found?.remove(path)
        }
    }
}
