import BLE
import BLETesting
import GATT
import Testing

@Suite(.timeLimit(.minutes(1))) struct StateRestorationTests {
    func waitFor<Call: Equatable>(_ wanted: Call, in calls: inout AsyncStream<Call>.Iterator) async {
        while let call = await calls.next() {
            if call == wanted { return }
        }
    }

    @Test func aRestartedCentralReconnectsAndResubscribesOnceFromWhatWasConfirmed() async throws {
        let store = try #require(RestorationStore(directory: try temporaryDirectory(), restoreIdentifier: "central"))
        let options = CentralManager.Options(restoration: store)
        let reference = CharacteristicReference(
            peripheral: FakeTree.identifier, service: .heartRate, characteristic: .heartRateMeasurement)
        do {
            let backend = FakeCentralBackend()
            let manager = CentralManager(backend: backend, options: options, clock: ManualClock())
            #expect(manager.restoredState == .empty)
            backend.send(.bluetoothdPresent(true))
            backend.sendSnapshot(FakeTree.snapshot())
            for await state in manager.stateUpdates() where state == .poweredOn { break }
            let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [FakeTree.identifier]).first)
            try await manager.connect(peripheral)
            backend.send(FakeTree.deviceChanged(["Connected": .bool(true), "ServicesResolved": .bool(true)]))
            let service = try #require(try await peripheral.discoverServices([.heartRate]).first)
            let measurement = try #require(
                try await peripheral.discoverCharacteristics([.heartRateMeasurement], for: service).first)
            try await peripheral.setNotifyValue(true, for: measurement)
        }
        // A new process: nothing but the store carries over.
        let backend = FakeCentralBackend()
        var calls = backend.calls.makeAsyncIterator()
        let manager = CentralManager(backend: backend, options: options, clock: ManualClock())
        guard case .restored(let restored) = manager.restoredState else {
            Issue.record("expected a restored state, got \(manager.restoredState)")
            return
        }
        #expect(restored.desiredConnections == [FakeTree.identifier])
        #expect(restored.subscriptions == [reference])
        #expect(restored.knownPeripherals.map(\.address) == ["AA:BB:CC:DD:EE:FF"])
        backend.send(.bluetoothdPresent(true))
        backend.sendSnapshot(FakeTree.snapshot())
        await waitFor(.connect(FakeTree.device), in: &calls)
        backend.send(FakeTree.deviceChanged(["Connected": .bool(true)]))
        backend.send(FakeTree.deviceChanged(["ServicesResolved": .bool(true)]))
        await waitFor(.startNotify(FakeTree.measurement), in: &calls)
        let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [FakeTree.identifier]).first)
        var connectionEvents = manager.connectionEvents().makeAsyncIterator()
        backend.send(FakeTree.deviceChanged(["Connected": .bool(false), "ServicesResolved": .bool(false)]))
        #expect(await connectionEvents.next() == .disconnected(FakeTree.identifier, .notConnected))
        #expect(peripheral.state == .disconnected)
        #expect(backend.log.filter { $0 == .startNotify(FakeTree.measurement) }.count == 1)
    }

    @Test func aRestartedPeripheralRegistersItsServicesAndAdvertisementAgain() async throws {
        let store = try #require(RestorationStore(directory: try temporaryDirectory(), restoreIdentifier: "peripheral"))
        let hci0 = AdapterStatus(id: "/org/bluez/hci0", name: "hci0", address: "00:11:22:33:44:55", powered: true)
        let battery = GATTService(
            uuid: .battery, characteristics: [GATTCharacteristic(uuid: .batteryLevel, properties: [.read, .notify])])
        let advertisement = AdvertisingData(serviceUUIDs: [.battery], localName: "bat")
        do {
            let backend = FakePeripheralBackend()
            let manager = PeripheralManager(backend: backend, options: .init(restoration: store), clock: ManualClock())
            backend.send(.bluetoothdPresent(true))
            backend.send(.adapters([hci0]))
            for await state in manager.stateUpdates() where state == .poweredOn { break }
            try await manager.add(battery)
            try await manager.startAdvertising(advertisement)
        }
        let backend = FakePeripheralBackend()
        var calls = backend.calls.makeAsyncIterator()
        let manager = PeripheralManager(backend: backend, options: .init(restoration: store), clock: ManualClock())
        #expect(manager.restoredState == .restored(RestorationState(services: [battery], advertising: advertisement)))
        backend.send(.bluetoothdPresent(true))
        backend.send(.adapters([hci0]))
        await waitFor(.setApplication([battery]), in: &calls)
        await waitFor(.registerAdvertisement(advertisement, extended: false), in: &calls)
    }
}
