import BLE
import GATT
import Synchronization

/// A scripted ``PeripheralBackend`` that records every call.
final class FakePeripheralBackend: PeripheralBackend {
    enum Call: Hashable, Sendable {
        case setApplication([GATTService])
        case registerAdvertisement(AdvertisingData, extended: Bool)
        case unregisterAdvertisement
        case respond(ATTRequestID, Result<[UInt8], ATTError>)
        case update([UInt8], LocalCharacteristic)
    }

    let events: AsyncStream<PeripheralBackendEvent>
    private let sink: AsyncStream<PeripheralBackendEvent>.Continuation
    let calls: AsyncStream<Call>
    private let callSink: AsyncStream<Call>.Continuation
    private let recorded = Mutex<[Call]>([])
    /// What ``updateValue(_:for:centrals:)`` returns.
    let queueHasRoom = Mutex(true)
    /// What ``advertisingCapabilities(adapter:)`` returns.
    let capabilities = Mutex(AdvertisingCapabilities.legacy)

    init() {
        (events, sink) = AsyncStream.makeStream()
        (calls, callSink) = AsyncStream.makeStream()
    }

    var log: [Call] { recorded.withLock { $0 } }

    func send(_ event: PeripheralBackendEvent) { sink.yield(event) }

    private func record(_ call: Call) {
        recorded.withLock { $0.append(call) }
        callSink.yield(call)
    }

    /// What the next RegisterApplication calls answer, in order (empty: success).
    let applicationRefusals = Mutex<[BLEError]>([])

    func setApplication(adapter: String, services: [GATTService]) async throws(BLEError) {
        record(.setApplication(services))
        if let refusal = applicationRefusals.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { throw refusal }
    }
    func registerAdvertisement(adapter: String, _ advertisement: AdvertisingData, extended: Bool) async throws(BLEError)
    {
        record(.registerAdvertisement(advertisement, extended: extended))
    }
    func unregisterAdvertisement(adapter: String) async throws(BLEError) { record(.unregisterAdvertisement) }
    func advertisingCapabilities(adapter: String) async throws(BLEError) -> AdvertisingCapabilities {
        capabilities.withLock { $0 }
    }
    func respond(to id: ATTRequestID, with result: Result<[UInt8], ATTError>) { record(.respond(id, result)) }
    func updateValue(
        _ value: [UInt8], for characteristic: LocalCharacteristic, centrals: [PeripheralIdentifier]?
    ) -> Bool {
        record(.update(value, characteristic))
        return queueHasRoom.withLock { $0 }
    }
}
