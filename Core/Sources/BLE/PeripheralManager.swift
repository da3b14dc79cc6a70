import GATT
import IO
import Synchronization

/// The peripheral role, in the image of `CBPeripheralManager`: publish
/// services, advertise, answer requests, notify subscribers. Driven by a
/// ``PeripheralBackend``.
public final class PeripheralManager: Sendable {
    /// Settings.
    public struct Options: Sendable {
        /// The name of the adapter to use, as users name it (`hci0`); nil
        /// for the first by name. The backend maps the name to its own
        /// identifier (BlueZ: the object path `/org/bluez/hci0`).
        public var adapter: String?
        /// How long a plugin has to answer a request before the manager
        /// answers ``unansweredRequestError`` for it.
        public var requestTimeout: Duration
        /// The ATT error an unanswered request gets.
        public var unansweredRequestError: ATTError
        /// Where to persist the services and the advertisement; nil for no
        /// state restoration.
        public var restoration: RestorationStore?

        /// Options; by default a 10 s deadline answered with Unlikely Error (0x0E).
        public init(
            adapter: String? = nil, requestTimeout: Duration = .seconds(10),
            unansweredRequestError: ATTError = .unlikelyError, restoration: RestorationStore? = nil
        ) {
            self.adapter = adapter
            self.requestTimeout = requestTimeout
            self.unansweredRequestError = unansweredRequestError
            self.restoration = restoration
        }
    }

    struct State: Sendable {
        var machine: ManagerStateMachine
        var services: [GATTService] = []
        var advertisement: (data: AdvertisingData, extended: Bool)?
        var subscribers: [LocalCharacteristic: [PeripheralIdentifier: ATTMTU]] = [:]
        var registrationFailures: [RegistrationFailure.Kind: BLEError] = [:]
    }

    let backend: any PeripheralBackend
    let clock: any BLEClock
    let options: Options
    let state: Mutex<State>
    private let stateBroadcast = Broadcast<ManagerState>(capacity: 64)
    private let requestBroadcast = Broadcast<ATTRequest>(capacity: 4096)
    private let subscriptionBroadcast = Broadcast<SubscriptionEvent>(capacity: 1024)
    private let readyBroadcast = Broadcast<Void>(capacity: 1)
    let registrationBroadcast = Broadcast<[RegistrationFailure]>(capacity: 16)
    private let pump = Mutex<Task<Void, Never>?>(nil)
    /// The requests not answered yet, answered with ``Options/unansweredRequestError`` at their deadline.
    private let deadlines: RequestDeadlines
    /// Writes the restoration state on the blocking pool (made at the first save).
    private let persistence = Mutex<CoalescingWriter<Void>?>(nil)

    /// What state restoration found at start (Core Bluetooth's
    /// will-restore-state). Restored services and advertising are registered
    /// with BlueZ as soon as the state is poweredOn.
    public let restoredState: RestorationLoad

    /// A manager over `backend`; it starts consuming the backend's events at once.
    public init(backend: any PeripheralBackend, options: Options = Options(), clock: any BLEClock = SystemBLEClock()) {
        self.backend = backend
        self.clock = clock
        self.options = options
        deadlines = RequestDeadlines(
            clock: clock, timeout: options.requestTimeout, fallback: options.unansweredRequestError)
        var initial = State(machine: ManagerStateMachine(preferredAdapter: options.adapter))
        let loaded: RestorationLoad
        do {
            loaded = try options.restoration?.load() ?? .empty
        } catch {
            loaded = .corrupt(reason: error.description, preservedAt: options.restoration?.path ?? "")
        }
        if case .restored(let saved) = loaded {
            initial.services = saved.services
            initial.advertisement = saved.advertising.map { ($0, false) }
        }
        self.restoredState = loaded
        self.state = Mutex(initial)
        let events = backend.events
        let task = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                self.handle(event)
            }
        }
        pump.withLock { $0 = task }
    }

    deinit {
        pump.withLock { $0?.cancel() }
    }

    /// The current state.
    public var currentState: ManagerState { state.withLock { $0.machine.state } }

    /// The state now and every change after.
    public func stateUpdates() -> AsyncStream<ManagerState> { stateBroadcast.stream(current: { currentState }) }

    /// Read and write requests, each to be answered once.
    public func requests() -> AsyncStream<ATTRequest> { requestBroadcast.stream() }

    /// Subscribe and unsubscribe events.
    public func subscriptionEvents() -> AsyncStream<SubscriptionEvent> { subscriptionBroadcast.stream() }

    /// An event each time ``updateValue(_:for:onSubscribedCentrals:)`` may be tried again.
    public func readyToUpdate() -> AsyncStream<Void> { readyBroadcast.stream() }

    /// The published services.
    public var services: [GATTService] { state.withLock { $0.services } }

    /// Whether an advertisement is registered.
    public var isAdvertising: Bool { state.withLock { $0.advertisement != nil } }

    /// Publishes `service` (the application is registered again whole).
    public func add(_ service: GATTService) async throws(BLEError) {
        try await changeServices { $0.append(service) }
    }

    /// Withdraws the first published service equal to `service`.
    public func remove(_ service: GATTService) async throws(BLEError) {
        try await changeServices { services in
            if let index = services.firstIndex(of: service) { services.remove(at: index) }
        }
    }

    /// Withdraws every service.
    public func removeAllServices() async throws(BLEError) {
        try await changeServices { $0.removeAll() }
    }

    /// Starts advertising `data`.
    ///
    /// `extended` nil (the default) chooses: data that fits the 31-byte legacy
    /// limit (counting the 3-byte Flags structure BlueZ adds) is advertised
    /// with legacy PDUs; longer data uses extended advertising when the
    /// adapter supports it (``PeripheralBackend/advertisingCapabilities(adapter:)``)
    /// up to its maximum length, and is refused otherwise. `false` forces
    /// legacy, `true` forces extended (up to 251 bytes, unchecked against the
    /// adapter). Every length is checked before BlueZ is asked to register.
    ///
    /// - Throws: ``BLEError/Code/invalidLength`` when too long,
    ///   ``BLEError/Code/alreadyExists`` when already advertising, the state's refusal.
    public func startAdvertising(_ data: AdvertisingData, extended: Bool? = nil) async throws(BLEError) {
        let adapter: String = try state.withLock { state throws(BLEError) in
            if let refusal = state.machine.state.refusal { throw refusal }
            guard state.advertisement == nil else { throw BLEError(.alreadyExists, message: "already advertising") }
            guard let adapter = state.machine.adapterID else { throw BLEError.unsupported }
            return adapter
        }
        let useExtended = try await choosePDUs(for: data, extended: extended, adapter: adapter)
        try state.withLock { state throws(BLEError) in
            guard state.advertisement == nil else { throw BLEError(.alreadyExists, message: "already advertising") }
            state.advertisement = (data, useExtended)
        }
        do throws(BLEError) {
            try await backend.registerAdvertisement(adapter: adapter, data, extended: useExtended)
        } catch {
            state.withLock { $0.advertisement = nil }
            recordRegistration(.advertisement, failure: error)
            throw error
        }
        recordRegistration(.advertisement, failure: nil)
        try await persist()
    }

    /// Whether `data` goes out in extended PDUs (see ``startAdvertising(_:extended:)``).
    func choosePDUs(for data: AdvertisingData, extended: Bool?, adapter: String) async throws(BLEError) -> Bool {
        switch extended {
        case .some(let forced):
            try Self.checkFits(data, extended: forced)
            return forced
        case nil:
            if (try? Self.checkFits(data, extended: false)) != nil { return false }
            let capabilities = try await backend.advertisingCapabilities(adapter: adapter)
            guard capabilities.extendedAdvertising else {
                try Self.checkFits(data, extended: false)
                return false
            }
            try Self.checkFits(data, limit: capabilities.maximumDataLength)
            return true
        }
    }

    /// Stops advertising (unregisters the advertisement).
    public func stopAdvertising() async throws(BLEError) {
        let adapter = state.withLock { state -> String? in
            guard state.advertisement != nil else { return nil }
            state.advertisement = nil
            return state.machine.adapterID
        }
        recordRegistration(.advertisement, failure: nil)
        try await persist()
        guard let adapter else { return }
        try await backend.unregisterAdvertisement(adapter: adapter)
    }

    /// Sends `value` to the centrals subscribed to `characteristic` (or only
    /// to `centrals`). Returns false when the transmit queue is full; wait
    /// for ``readyToUpdate()`` and try again.
    public func updateValue(
        _ value: [UInt8], for characteristic: LocalCharacteristic,
        onSubscribedCentrals centrals: [PeripheralIdentifier]? = nil
    ) -> Bool {
        backend.updateValue(value, for: characteristic, centrals: centrals)
    }

    /// The centrals subscribed to `characteristic`, with their MTU.
    public func subscribers(of characteristic: LocalCharacteristic) -> [PeripheralIdentifier: ATTMTU] {
        state.withLock { $0.subscribers[characteristic] ?? [:] }
    }

    /// Throws ``BLEError/Code/invalidLength`` unless `data` fits the limit.
    public static func checkFits(_ data: AdvertisingData, extended: Bool) throws(BLEError) {
        try checkFits(data, limit: extended ? AdvertisingDataLimit.extended.maximumLength : 31)
    }

    /// Throws ``BLEError/Code/invalidLength`` unless `data`, with the Flags
    /// structure BlueZ adds, fits in `limit` bytes.
    public static func checkFits(_ data: AdvertisingData, limit: Int) throws(BLEError) {
        var withFlags = data
        if withFlags.flags == nil { withFlags.flags = .leGeneralDiscoverable }
        let name = limit > AdvertisingDataLimit.legacy.maximumLength ? "extended" : "legacy"
        do {
            _ = try withFlags.encode(limit: AdvertisingDataLimit(maximumLength: limit, name: name))
        } catch {
            throw BLEError(.invalidLength, message: "\(error)")
        }
    }

    private func changeServices(_ change: (inout [GATTService]) -> Void) async throws(BLEError) {
        let (adapter, services): (String, [GATTService]) = try state.withLock { state throws(BLEError) in
            if let refusal = state.machine.state.refusal { throw refusal }
            guard let adapter = state.machine.adapterID else { throw BLEError.unsupported }
            change(&state.services)
            return (adapter, state.services)
        }
        do throws(BLEError) {
            try await backend.setApplication(adapter: adapter, services: services)
        } catch {
            recordRegistration(.application, failure: error)
            throw error
        }
        recordRegistration(.application, failure: nil)
        try await persist()
    }

    /// Writes services and advertisement to the restoration store, if any,
    /// before the change is reported done.
    /// The write runs on the blocking pool; saves asked for meanwhile fold into the next, which takes the state as
    /// it is then.
    private func persist() async throws(BLEError) {
        guard let store = options.restoration else { return }
        let writer = persistence.withLock { writer in
            if let writer { return writer }
            let made = CoalescingWriter<Void> { [weak self] () throws(SystemError) in
                guard let self else { return }
                let (services, advertisement) = state.withLock { ($0.services, $0.advertisement?.data) }
                try store.save(RestorationState(services: services, advertising: advertisement))
            }
            writer = made
            return made
        }
        do {
            try await writer.save(())
        } catch {
            throw BLEError(.failed, message: "saving state: \(error)")
        }
    }

    private func handle(_ event: PeripheralBackendEvent) {
        var change: ManagerState?
        switch event {
        case .bluetoothdPresent(let present):
            change = state.withLock { $0.machine.apply(.bluetoothdPresent(present)) }
        case .accessDenied:
            change = state.withLock { $0.machine.apply(.accessDenied) }
        case .adapters(let adapters):
            change = state.withLock { $0.machine.apply(.treeLoaded(adapters)) }
        case .adapterUpdated(let adapter):
            change = state.withLock { $0.machine.apply(.adapterUpdated(adapter)) }
        case .adapterRemoved(let id):
            change = state.withLock { $0.machine.apply(.adapterRemoved(id: id)) }
        case .request(let info):
            deliver(info)
        case .subscribed(let central, let characteristic, let mtu):
            state.withLock { $0.subscribers[characteristic, default: [:]][central] = mtu }
            subscriptionBroadcast.yield(.subscribed(central: central, characteristic: characteristic, mtu: mtu))
        case .unsubscribed(let central, let characteristic):
            state.withLock { $0.subscribers[characteristic]?[central] = nil }
            subscriptionBroadcast.yield(.unsubscribed(central: central, characteristic: characteristic))
        case .readyToUpdate:
            readyBroadcast.yield(())
        case .advertisementReleased:
            state.withLock { $0.advertisement = nil }
        }
        if let change {
            // What to register again is taken before anyone hears of poweredOn: a service added by a listener
            // woken by this very change registers itself, and must not be registered twice at once.
            let registrations = change == .poweredOn ? registrationsToRestore() : nil
            stateBroadcast.yield(change)
            if let registrations { restoreRegistrations(registrations) }
        }
    }

    private func deliver(_ info: ATTRequestInfo) {
        let backend = self.backend
        let deadlines = self.deadlines
        let request = ATTRequest(info: info) { result in
            deadlines.remove(info.id)
            backend.respond(to: info.id, with: result)
        }
        deadlines.add(request)
        requestBroadcast.yield(request)
    }

    /// After bluetoothd returns or the adapter powers on, BlueZ has forgotten
    /// our application and advertisement: register them again.
    private func registrationsToRestore() -> (
        adapter: String?, services: [GATTService], advertisement: (data: AdvertisingData, extended: Bool)?
    ) {
        state.withLock { ($0.machine.adapterID, $0.services, $0.advertisement) }
    }

    private func restoreRegistrations(
        _ registrations: (
            adapter: String?, services: [GATTService], advertisement: (data: AdvertisingData, extended: Bool)?
        )
    ) {
        let (adapter, services, advertisement) = registrations
        guard let adapter else { return }
        let backend = self.backend
        Task { [weak self] in
            if !services.isEmpty {
                do throws(BLEError) {
                    try await backend.setApplication(adapter: adapter, services: services)
                    self?.recordRegistration(.application, failure: nil)
                } catch {
                    self?.recordRegistration(.application, failure: error)
                }
            }
            if let advertisement {
                // Restored from disk the choice is unknown (saved data only): choose again.
                let extended =
                    (try? Self.checkFits(advertisement.data, extended: false)) != nil
                    ? advertisement.extended
                    : ((try? await backend.advertisingCapabilities(adapter: adapter))?.extendedAdvertising ?? true)
                do throws(BLEError) {
                    try await backend.registerAdvertisement(adapter: adapter, advertisement.data, extended: extended)
                    self?.recordRegistration(.advertisement, failure: nil)
                } catch {
                    self?.recordRegistration(.advertisement, failure: error)
                }
            }
        }
    }
}
