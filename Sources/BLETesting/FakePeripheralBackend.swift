import BLE
import GATT
import Synchronization

/// A ``PeripheralBackend`` standing in for bluetoothd: the test sends it events (``send(_:)``) and reads every call
/// it got, in order, from ``calls`` (or all at once from ``log``), the way NIO's `EmbeddedChannel` stands in for a
/// socket. Nothing runs underneath: a plugin's peripheral logic is tested without a bus or a process.
///
/// ```swift
/// let (manager, backend) = await FakePeripheralBackend.poweredOn()
/// var calls = backend.calls.makeAsyncIterator()
/// try await manager.add(service)
/// #expect(await calls.next(where: { if case .setApplication = $0 { true } else { false } }) != nil)
/// ```
public final class FakePeripheralBackend: PeripheralBackend {
    /// A call the manager made.
    public enum Call: Hashable, Sendable {
        /// The GATT application was (re)registered with these services.
        case setApplication([GATTService])
        /// An advertisement was registered (`extended`: as an extended advertisement).
        case registerAdvertisement(AdvertisingData, extended: Bool)
        /// The advertisement was unregistered.
        case unregisterAdvertisement
        /// A central's request was answered.
        case respond(ATTRequestID, Result<[UInt8], ATTError>)
        /// A value was sent to subscribers; `accepted` is what the backend answered (false: its queue was full).
        case update([UInt8], LocalCharacteristic, accepted: Bool)
    }

    /// What the manager reads: the events ``send(_:)`` gives.
    public let events: AsyncStream<PeripheralBackendEvent>
    private let sink: AsyncStream<PeripheralBackendEvent>.Continuation
    /// Every call, in order, as it is made.
    public let calls: AsyncStream<Call>
    private let callSink: AsyncStream<Call>.Continuation
    private let recorded = Mutex<[Call]>([])
    /// What ``updateValue(_:for:centrals:)`` answers (false: the queue is full).
    public let queueHasRoom = Mutex(true)
    /// What ``advertisingCapabilities(adapter:)`` answers.
    public let capabilities = Mutex(AdvertisingCapabilities.legacy)

    /// A backend with no events yet.
    public init() {
        (events, sink) = AsyncStream.makeStream()
        (calls, callSink) = AsyncStream.makeStream()
    }

    /// A manager over a new backend (with `options` and `clock`), once poweredOn on hci0.
    public static func poweredOn(
        options: PeripheralManager.Options = .init(), clock: any BLEClock = SystemBLEClock()
    ) async -> (PeripheralManager, FakePeripheralBackend) {
        let backend = FakePeripheralBackend()
        let manager = PeripheralManager(backend: backend, options: options, clock: clock)
        backend.send(.bluetoothdPresent(true))
        backend.send(
            .adapters([AdapterStatus(id: "/org/bluez/hci0", name: "hci0", address: "00:11:22:33:44:55", powered: true)])
        )
        for await state in manager.stateUpdates() where state == .poweredOn { break }
        return (manager, backend)
    }

    /// Every call so far, in order.
    public var log: [Call] { recorded.withLock { $0 } }

    /// Gives the manager `event`, as bluetoothd would.
    public func send(_ event: PeripheralBackendEvent) { sink.yield(event) }

    private func record(_ call: Call) {
        recorded.withLock { $0.append(call) }
        callSink.yield(call)
    }

    /// What the next RegisterApplication calls answer, in order (empty: success).
    public let applicationRefusals = Mutex<[BLEError]>([])

    /// Records ``Call/setApplication(_:)``, then answers with the first of ``applicationRefusals``, if any.
    public func setApplication(adapter: String, services: [GATTService]) async throws(BLEError) {
        record(.setApplication(services))
        if let refusal = applicationRefusals.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { throw refusal }
    }
    /// Records ``Call/registerAdvertisement(_:extended:)``.
    public func registerAdvertisement(
        adapter: String, _ advertisement: AdvertisingData, extended: Bool
    ) async throws(BLEError) {
        record(.registerAdvertisement(advertisement, extended: extended))
    }
    /// Records ``Call/unregisterAdvertisement``.
    public func unregisterAdvertisement(adapter: String) async throws(BLEError) { record(.unregisterAdvertisement) }
    /// Answers ``capabilities``.
    public func advertisingCapabilities(adapter: String) async throws(BLEError) -> AdvertisingCapabilities {
        capabilities.withLock { $0 }
    }
    /// Records ``Call/respond(_:_:)``.
    public func respond(to id: ATTRequestID, with result: Result<[UInt8], ATTError>) { record(.respond(id, result)) }
    /// Records ``Call/update(_:_:accepted:)`` and answers ``queueHasRoom``.
    public func updateValue(
        _ value: [UInt8], for characteristic: LocalCharacteristic, centrals: [PeripheralIdentifier]?
    ) -> Bool {
        let room = queueHasRoom.withLock { $0 }
        record(.update(value, characteristic, accepted: room))
        return room
    }
}

extension AsyncStream.Iterator {
    /// Skips elements until one `matches` and returns it; nil when the stream ends first.
    public mutating func next(where matches: (Element) -> Bool) async -> Element? {
        while let element = await next() {
            if matches(element) { return element }
        }
        return nil
    }
}
