import BLE
import GATT
import Testing

/// The peripheral manager remembers what BlueZ refused to register (its GATT
/// application, its advertisement) until a registration of that kind succeeds,
/// including the registrations it repeats by itself after a power cycle.
@Suite(.timeLimit(.minutes(1))) struct RegistrationFailureTests {
    let battery = GATTService(
        uuid: .battery, characteristics: [GATTCharacteristic(uuid: .batteryLevel, properties: [.read])])

    @Test func aRefusedApplicationIsReportedUntilARegistrationSucceeds() async throws {
        let (manager, backend, _) = await PeripheralManagerTests().poweredOn()
        var updates = manager.registrationUpdates().makeAsyncIterator()
        #expect(await updates.next() == [])
        let refusal = BLEError(.failed, message: "No GATT server here")
        backend.applicationRefusals.withLock { $0 = [refusal] }
        await #expect(throws: refusal) { try await manager.add(battery) }
        #expect(manager.registrationFailures == [RegistrationFailure(kind: .application, error: refusal)])
        #expect(await updates.next() == [RegistrationFailure(kind: .application, error: refusal)])
        #expect(manager.registrationFailures.first?.description.hasPrefix("GATT application not registered") == true)
        try await manager.remove(battery)
        #expect(manager.registrationFailures == [])
        #expect(await updates.next() == [])
    }

    @Test func aRefusalOfTheRegistrationRepeatedAfterAPowerCycleIsReported() async throws {
        let (manager, backend, _) = await PeripheralManagerTests().poweredOn()
        try await manager.add(battery)
        var updates = manager.registrationUpdates().makeAsyncIterator()
        #expect(await updates.next() == [])
        let refusal = BLEError(.failed, message: "refused after power-on")
        backend.applicationRefusals.withLock { $0 = [refusal] }
        let hci0 = PeripheralManagerTests().hci0
        backend.send(.adapterUpdated(.init(id: hci0.id, name: hci0.name, address: hci0.address, powered: false)))
        backend.send(.adapterUpdated(.init(id: hci0.id, name: hci0.name, address: hci0.address, powered: true)))
        #expect(await updates.next() == [RegistrationFailure(kind: .application, error: refusal)])
        backend.send(.adapterUpdated(.init(id: hci0.id, name: hci0.name, address: hci0.address, powered: false)))
        backend.send(.adapterUpdated(.init(id: hci0.id, name: hci0.name, address: hci0.address, powered: true)))
        #expect(await updates.next() == [], "registered again on the next power-on")
    }
}
