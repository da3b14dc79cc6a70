import BLE
import GATT
import Synchronization

/// A ``PeripheralBackend`` standing in for bluetoothd: tests send it events
/// and read every call it got, in order, as a stream.
final class ScriptedPeripheralBackend: PeripheralBackend {
    enum Call: Hashable, Sendable {
        case setApplication([GATTService])
        case registerAdvertisement(AdvertisingData)
        case unregisterAdvertisement
        case respond(ATTRequestID, Result<[UInt8], ATTError>)
        case update([UInt8], LocalCharacteristic, accepted: Bool)
    }

    let events: AsyncStream<PeripheralBackendEvent>
    private let sink: AsyncStream<PeripheralBackendEvent>.Continuation
    let calls: AsyncStream<Call>
    private let callSink: AsyncStream<Call>.Continuation
    /// What ``updateValue(_:for:centrals:)`` answers (false: the queue is full).
    let queueHasRoom = Mutex(true)

    init() {
        (events, sink) = AsyncStream.makeStream()
        (calls, callSink) = AsyncStream.makeStream()
    }

    /// A manager over a new backend, once poweredOn on hci0.
    static func poweredOn() async -> (PeripheralManager, ScriptedPeripheralBackend) {
        let backend = ScriptedPeripheralBackend()
        let manager = PeripheralManager(backend: backend)
        backend.send(.bluetoothdPresent(true))
        backend.send(.adapters([ManagerStateMachine.Adapter(path: "/org/bluez/hci0", powered: true)]))
        for await state in manager.stateUpdates() where state == .poweredOn { break }
        return (manager, backend)
    }

    func send(_ event: PeripheralBackendEvent) { sink.yield(event) }

    func setApplication(adapter: String, services: [GATTService]) async throws(BLEError) {
        callSink.yield(.setApplication(services))
    }
    func registerAdvertisement(adapter: String, _ advertisement: AdvertisingData, extended: Bool) async throws(BLEError)
    {
        callSink.yield(.registerAdvertisement(advertisement))
    }
    func unregisterAdvertisement(adapter: String) async throws(BLEError) { callSink.yield(.unregisterAdvertisement) }
    func respond(to id: ATTRequestID, with result: Result<[UInt8], ATTError>) { callSink.yield(.respond(id, result)) }
    func updateValue(
        _ value: [UInt8], for characteristic: LocalCharacteristic, centrals: [PeripheralIdentifier]?
    ) -> Bool {
        let room = queueHasRoom.withLock { $0 }
        callSink.yield(.update(value, characteristic, accepted: room))
        return room
    }
}

extension AsyncStream<ScriptedPeripheralBackend.Call>.Iterator {
    /// Skips calls until one `matches`; nil if the stream ended.
    mutating func next(
        where matches: (ScriptedPeripheralBackend.Call) -> Bool
    ) async -> ScriptedPeripheralBackend.Call? {
        while let call = await next() {
            if matches(call) { return call }
        }
        return nil
    }
}
