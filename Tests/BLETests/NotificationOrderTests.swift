import BLE
import BLETesting
import GATT
import Synchronization
import Testing

/// `setNotifyValue(true, …)` and `notifications(for:)` may be called in either order: values that
/// arrive between the two wait for the stream, within a bound, and turning the subscription off
/// drops them.
@Suite(.timeLimit(.minutes(1))) struct NotificationOrderTests {
    let helper = CentralManagerTests()

    func notify(_ backend: FakeCentralBackend, _ value: UInt8) {
        backend.send(
            .delta(
                .propertiesChanged(
                    path: FakeTree.measurement, interface: BlueZInterface.gattCharacteristic,
                    changed: ["Notifying": .bool(true), "Value": .bytes([0, value])], invalidated: []), serial: nil))
    }

    func subscribed(
        capacity: Int = 1024
    ) async throws -> (Peripheral, RemoteCharacteristic, FakeCentralBackend, CentralManager) {
        let backend = FakeCentralBackend()
        let manager = CentralManager(
            backend: backend, options: .init(operationPolicy: helper.policy, notificationQueueCapacity: capacity),
            clock: ManualClock())
        backend.send(.bluetoothdPresent(true))
        backend.sendSnapshot(FakeTree.snapshot(connected: true, resolved: true))
        for await state in manager.stateUpdates() where state == .poweredOn { break }
        let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [FakeTree.identifier]).first)
        let measurement = try #require(try await helper.characteristics(of: peripheral)[.heartRateMeasurement])
        try await peripheral.setNotifyValue(true, for: measurement)
        return (peripheral, measurement, backend, manager)
    }

    @Test func valuesBetweenSubscribingAndListeningReachTheStream() async throws {
        let (peripheral, measurement, backend, manager) = try await subscribed()
        notify(backend, 1)
        notify(backend, 2)
        var values = peripheral.notifications(for: measurement).makeAsyncIterator()
        notify(backend, 3)
        #expect(await values.next() == [0, 1])
        #expect(await values.next() == [0, 2])
        #expect(await values.next() == [0, 3])
        let held = manager.statistics.heldNotifications
        #expect(held.offered == 2 && held.delivered == 2 && held.dropped == 0 && held.waiting == 0)
    }

    @Test func heldValuesAreBoundedDroppingTheOldestCounted() async throws {
        let (peripheral, measurement, backend, manager) = try await subscribed(capacity: 4)
        for value: UInt8 in 1...10 { notify(backend, value) }
        #expect(manager.statistics.heldNotifications.waiting == 4)
        var values = peripheral.notifications(for: measurement).makeAsyncIterator()
        for value: UInt8 in 7...10 { #expect(await values.next() == [0, value]) }
        let held = manager.statistics.heldNotifications
        #expect(held.offered == 10 && held.dropped == 6 && held.delivered == 4 && held.highWater == 4)
    }

    @Test func valuesAreHeldAgainBetweenStreamsAndDroppedWithTheSubscription() async throws {
        let (peripheral, measurement, backend, manager) = try await subscribed()
        do {
            var first = peripheral.notifications(for: measurement).makeAsyncIterator()
            notify(backend, 1)
            #expect(await first.next() == [0, 1])
        }
        notify(backend, 2)
        var second = peripheral.notifications(for: measurement).makeAsyncIterator()
        #expect(await second.next() == [0, 2])
        notify(backend, 3)
        #expect(await second.next() == [0, 3])
        try await peripheral.setNotifyValue(false, for: measurement)
        notify(backend, 4)
        #expect(manager.statistics.heldNotifications.waiting == 0, "nothing is held for an ended subscription")
    }

    @Test func unsubscribingDropsWhatWaits() async throws {
        let (peripheral, measurement, backend, manager) = try await subscribed()
        notify(backend, 1)
        try await peripheral.setNotifyValue(false, for: measurement)
        let held = manager.statistics.heldNotifications
        #expect(held.offered == 1 && held.dropped == 1 && held.waiting == 0)
        try await peripheral.setNotifyValue(true, for: measurement)
        var values = peripheral.notifications(for: measurement).makeAsyncIterator()
        notify(backend, 2)
        #expect(await values.next() == [0, 2], "the value from the old subscription is gone")
    }
}
