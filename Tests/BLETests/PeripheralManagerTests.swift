import BLE
import BLETesting
import GATT
import Testing

@Suite(.timeLimit(.minutes(1))) struct PeripheralManagerTests {
    let hci0 = AdapterStatus(id: "/org/bluez/hci0", name: "hci0", address: "00:11:22:33:44:55", powered: true)
    let central = PeripheralIdentifier(adapter: "00:11:22:33:44:55", address: "66:55:44:33:22:11", addressType: .random)
    let level = LocalCharacteristic(service: .battery, uuid: .batteryLevel)
    let battery = GATTService(
        uuid: .battery, characteristics: [GATTCharacteristic(uuid: .batteryLevel, properties: [.read, .notify])])

    func poweredOn(timeout: Duration = .seconds(10)) async -> (PeripheralManager, FakePeripheralBackend, ManualClock) {
        let backend = FakePeripheralBackend()
        let clock = ManualClock()
        let manager = PeripheralManager(backend: backend, options: .init(requestTimeout: timeout), clock: clock)
        backend.send(.bluetoothdPresent(true))
        backend.send(.adapters([hci0]))
        for await state in manager.stateUpdates() where state == .poweredOn { break }
        return (manager, backend, clock)
    }

    func waitFor(
        _ wanted: FakePeripheralBackend.Call, in calls: inout AsyncStream<FakePeripheralBackend.Call>.Iterator
    )
        async
    {
        while let call = await calls.next() {
            if call == wanted { return }
        }
    }

    @Test func advertisingDataOverTheLegacyLimitIsRefusedBeforeBlueZIsAsked() async throws {
        let (manager, backend, _) = await poweredOn()
        // 3 (flags BlueZ adds) + 2 + 26 (name) = 31 fits; one more byte does not.
        let fits = AdvertisingData(localName: String(repeating: "n", count: 26))
        let tooLong = AdvertisingData(localName: String(repeating: "n", count: 27))
        await #expect(throws: BLEError.self) { try await manager.startAdvertising(tooLong) }
        #expect(backend.log.isEmpty, "BlueZ was never asked")
        #expect(!manager.isAdvertising)
        try await manager.startAdvertising(tooLong, extended: true)
        try await manager.stopAdvertising()
        try await manager.startAdvertising(fits)
        #expect(manager.isAdvertising)
        await #expect(throws: BLEError(.alreadyExists, message: "already advertising")) {
            try await manager.startAdvertising(fits)
        }
        #expect(
            backend.log == [
                .registerAdvertisement(tooLong, extended: true), .unregisterAdvertisement,
                .registerAdvertisement(fits, extended: false),
            ])
    }

    @Test func longDataGoesExtendedOnlyWhereTheAdapterSupportsItUpToItsLength() async throws {
        let (manager, backend, _) = await poweredOn()
        let fits = AdvertisingData(localName: String(repeating: "n", count: 26))
        let long = AdvertisingData(localName: String(repeating: "n", count: 60))
        // Legacy adapter: refused with invalidLength, BlueZ never asked to register.
        await #expect(throws: BLEError.self) { try await manager.startAdvertising(long) }
        #expect(backend.log.isEmpty)
        // Extended adapter limited to 50 bytes: still too long (3 + 2 + 60 = 65).
        backend.capabilities.withLock { $0 = AdvertisingCapabilities(extendedAdvertising: true, maximumDataLength: 50) }
        do throws(BLEError) {
            try await manager.startAdvertising(long)
            Issue.record("65 bytes accepted on a 50-byte adapter")
        } catch {
            #expect(error.code == .invalidLength, "\(error)")
        }
        #expect(backend.log.isEmpty)
        // Extended adapter with 251 bytes: extended PDUs; data that fits legacy stays legacy.
        backend.capabilities.withLock { $0 = AdvertisingCapabilities(secondaryChannels: ["1M", "2M"], maxAdvLen: nil) }
        try await manager.startAdvertising(long)
        try await manager.stopAdvertising()
        try await manager.startAdvertising(fits)
        #expect(
            backend.log == [
                .registerAdvertisement(long, extended: true), .unregisterAdvertisement,
                .registerAdvertisement(fits, extended: false),
            ])
    }

    @Test func advertisingCapabilitiesFollowBluetoothdsProperties() {
        // No SupportedSecondaryChannels (not an extended controller) and no -E: legacy.
        #expect(AdvertisingCapabilities(secondaryChannels: nil, maxAdvLen: nil) == .legacy)
        #expect(AdvertisingCapabilities(secondaryChannels: [], maxAdvLen: nil) == .legacy)
        // The controller offers a secondary channel: 251 bytes (HCI_MAX_EXT_AD_LENGTH).
        #expect(
            AdvertisingCapabilities(secondaryChannels: ["1M"], maxAdvLen: nil)
                == AdvertisingCapabilities(extendedAdvertising: true, maximumDataLength: 251))
        // bluetoothd -E: MaxAdvLen decides the length.
        #expect(
            AdvertisingCapabilities(secondaryChannels: ["1M", "2M"], maxAdvLen: 191)
                == AdvertisingCapabilities(extendedAdvertising: true, maximumDataLength: 191))
        #expect(AdvertisingCapabilities(secondaryChannels: nil, maxAdvLen: 31) == .legacy)
    }

    @Test func servicesAreRegisteredAsOneApplicationUpdatedOnEveryChange() async throws {
        let (manager, backend, _) = await poweredOn()
        let deviceInfo = GATTService(uuid: .deviceInformation)
        try await manager.add(battery)
        try await manager.add(deviceInfo)
        try await manager.remove(battery)
        try await manager.removeAllServices()
        #expect(
            backend.log == [
                .setApplication([battery]), .setApplication([battery, deviceInfo]), .setApplication([deviceInfo]),
                .setApplication([]),
            ])
    }

    @Test func aRequestIsAnsweredExactlyOnce() async throws {
        let (manager, backend, _) = await poweredOn()
        var requests = manager.requests().makeAsyncIterator()
        var calls = backend.calls.makeAsyncIterator()
        backend.send(.request(ATTRequestInfo(id: ATTRequestID(1), central: central, characteristic: level, offset: 2)))
        let request = try #require(await requests.next())
        #expect(request.isRead && request.offset == 2 && request.central == central)
        #expect(request.respond(with: [42]))
        #expect(!request.respond(withError: .readNotPermitted), "a second answer is refused")
        await waitFor(.respond(ATTRequestID(1), .success([42])), in: &calls)
        #expect(backend.log == [.respond(ATTRequestID(1), .success([42]))])
    }

    @Test func anUnansweredRequestBecomesAnATTErrorAtItsDeadline() async throws {
        let (manager, backend, clock) = await poweredOn(timeout: .seconds(5))
        var requests = manager.requests().makeAsyncIterator()
        var calls = backend.calls.makeAsyncIterator()
        backend.send(
            .request(
                ATTRequestInfo(
                    id: ATTRequestID(7), central: central, characteristic: level, value: [1], write: .withResponse)))
        let request = try #require(await requests.next())
        clock.advance(by: .seconds(4))
        #expect(!request.isAnswered)
        clock.advance(by: .seconds(1))
        await waitFor(.respond(ATTRequestID(7), .failure(.unlikelyError)), in: &calls)
        #expect(request.isAnswered)
        #expect(!request.respond(), "the plugin's late answer is dropped")
        #expect(backend.log == [.respond(ATTRequestID(7), .failure(.unlikelyError))])
    }

    @Test("unanswered requests expire in arrival order, each at its own deadline; one answered in time does not")
    func unansweredRequestsExpireInArrivalOrder() async throws {
        let (manager, backend, clock) = await poweredOn(timeout: .seconds(5))
        var requests = manager.requests().makeAsyncIterator()
        var calls = backend.calls.makeAsyncIterator()
        var delivered: [ATTRequest] = []
        for id in 1...3 {
            backend.send(
                .request(
                    ATTRequestInfo(
                        id: ATTRequestID(UInt64(id)), central: central, characteristic: level, value: [1],
                        write: .withResponse)))
            delivered.append(try #require(await requests.next()))
            clock.advance(by: .seconds(1))
        }
        #expect(delivered[1].respond())
        await waitFor(.respond(ATTRequestID(2), .success([])), in: &calls)
        clock.advance(by: .seconds(2))
        await waitFor(.respond(ATTRequestID(1), .failure(.unlikelyError)), in: &calls)
        #expect(!delivered[2].isAnswered)
        clock.advance(by: .seconds(2))
        await waitFor(.respond(ATTRequestID(3), .failure(.unlikelyError)), in: &calls)
        #expect(
            backend.log == [
                .respond(ATTRequestID(2), .success([])), .respond(ATTRequestID(1), .failure(.unlikelyError)),
                .respond(ATTRequestID(3), .failure(.unlikelyError)),
            ])
    }

    @Test func subscriptionsCarryTheCentralsMTUAndUpdatesReportAFullQueue() async throws {
        let (manager, backend, _) = await poweredOn()
        var events = manager.subscriptionEvents().makeAsyncIterator()
        var ready = manager.readyToUpdate().makeAsyncIterator()
        backend.send(.subscribed(central: central, characteristic: level, mtu: ATTMTU(clamping: 185)))
        #expect(await events.next() == .subscribed(central: central, characteristic: level, mtu: ATTMTU(clamping: 185)))
        #expect(manager.subscribers(of: level) == [central: ATTMTU(clamping: 185)])
        #expect(manager.updateValue([50], for: level))
        backend.queueHasRoom.withLock { $0 = false }
        #expect(!manager.updateValue([49], for: level))
        backend.send(.readyToUpdate)
        #expect(await ready.next() != nil)
        backend.send(.unsubscribed(central: central, characteristic: level))
        #expect(await events.next() == .unsubscribed(central: central, characteristic: level))
        #expect(manager.subscribers(of: level).isEmpty)
    }

    @Test func servicesAndAdvertisingAreRegisteredAgainAfterAPowerCycle() async throws {
        let (manager, backend, _) = await poweredOn()
        var calls = backend.calls.makeAsyncIterator()
        let advertisement = AdvertisingData(serviceUUIDs: [.battery])
        try await manager.add(battery)
        try await manager.startAdvertising(advertisement)
        backend.send(.adapterUpdated(.init(id: hci0.id, name: hci0.name, address: hci0.address, powered: false)))
        backend.send(.adapterUpdated(hci0))
        for _ in 0..<2 {
            await waitFor(.setApplication([battery]), in: &calls)
            await waitFor(.registerAdvertisement(advertisement, extended: false), in: &calls)
        }
        #expect(manager.currentState == .poweredOn)
    }
}
