import BLE
import BLETesting
import GATT
import Synchronization
import Testing

/// The central under a crowded room, over the fake backend and the manual clock: scans that coalesce per device
/// when their consumer stops reading, refreshes of pruned devices that never pile up, device tables that expire,
/// adapter scoping, and notifications that hold an AcquireNotify socket back instead of piling up.
@Suite(.timeLimit(.minutes(1))) struct CentralIngestTests {
    static let adapter0 = "/org/bluez/hci0"
    static let adapter1 = "/org/bluez/hci1"

    static func path(_ index: Int, adapter: String = adapter0) -> String {
        adapter + "/dev_C0_00_00_00_" + hex(index >> 8) + "_" + hex(index & 0xFF)
    }

    static func address(_ index: Int) -> String { "C0:00:00:00:" + hex(index >> 8) + ":" + hex(index & 0xFF) }

    static func hex(_ value: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return text.count == 1 ? "0" + text : text
    }

    static func identifier(_ index: Int, adapterAddress: String = "00:11:22:33:44:55") -> PeripheralIdentifier {
        PeripheralIdentifier(adapter: adapterAddress, address: address(index), addressType: .random)
    }

    static func device(_ index: Int, adapter: String = adapter0, connected: Bool = false) -> PropertyMap {
        [
            "Address": .string(address(index)), "AddressType": .string("random"), "Adapter": .objectPath(adapter),
            "RSSI": .int(-70), "Connected": .bool(connected), "Name": .string("D\(index)"),
        ]
    }

    static func appeared(_ index: Int, adapter: String = adapter0, connected: Bool = false) -> CentralBackendEvent {
        .delta(
            .interfacesAdded(
                path: path(index, adapter: adapter),
                interfaces: [BlueZInterface.device: device(index, adapter: adapter, connected: connected)]),
            serial: nil)
    }

    static func report(_ index: Int, round: Int, adapter: String = adapter0) -> CentralBackendEvent {
        .delta(
            .propertiesChanged(
                path: path(index, adapter: adapter), interface: BlueZInterface.device,
                changed: [
                    "RSSI": .int(Int64(-40 - round % 30)),
                    "ManufacturerData": .dictionary([.uint(0x59): .bytes([UInt8(truncatingIfNeeded: round)])]),
                ], invalidated: []), serial: nil)
    }

    static let adapters: ObjectTreeSnapshot = [
        adapter0: [BlueZInterface.adapter: ["Address": .string("00:11:22:33:44:55"), "Powered": .bool(true)]],
        adapter1: [BlueZInterface.adapter: ["Address": .string("00:11:22:33:44:66"), "Powered": .bool(true)]],
    ]

    func poweredOn(
        _ options: CentralManager.Options = .init(), clock: ManualClock = ManualClock()
    ) async -> (CentralManager, FakeCentralBackend) {
        let backend = FakeCentralBackend()
        let manager = CentralManager(backend: backend, options: options, clock: clock)
        backend.send(.bluetoothdPresent(true))
        backend.sendSnapshot(Self.adapters)
        for await state in manager.stateUpdates() where state == .poweredOn { break }
        return (manager, backend)
    }

    @Test func aConsumerThatStopsReadingHoldsOneDiscoveryPerDeviceThenSeesEachNewestWithItsMergedCount() async throws {
        let (manager, backend) = await poweredOn()
        let scan = try manager.scanForPeripherals(options: ScanOptions(allowDuplicates: true))
        let devices = 50
        let rounds = 100
        for index in 0..<devices { backend.send(Self.appeared(index)) }
        for round in 1...rounds {
            for index in 0..<devices { backend.send(Self.report(index, round: round)) }
        }
        // 5,050 reports, nobody reading: one discovery per device waits, the rest is merged into it.
        #expect(scan.counters.offered == devices * (rounds + 1))
        #expect(scan.counters.waiting == devices)
        #expect(scan.counters.highWater == devices, "memory bounded by the devices, not by the reports")
        #expect(scan.counters.merged == devices * rounds)
        #expect(scan.counters.dropped == 0)

        var seen: [PeripheralIdentifier: Discovery] = [:]
        var iterator = scan.makeAsyncIterator()
        while seen.count < devices, let found = await iterator.next() { seen[found.identifier] = found }
        #expect(Set(seen.keys) == Set((0..<devices).map { Self.identifier($0) }))
        for found in seen.values {
            #expect(found.reportCount == rounds + 1)
            #expect(found.advertisement.manufacturerData[0x59] == [UInt8(rounds)], "the newest report wins")
            #expect(found.rssi == -40 - rounds % 30)
        }
        #expect(seen.values.map(\.reportCount).reduce(0, +) == devices * (rounds + 1), "every report accounted for")
        #expect(manager.statistics.advertisementReports == devices * (rounds + 1))
    }

    @Test func aScanQueueHoldsAtMostItsCapacityOfDevicesAndCountsTheNewOnesItDrops() async throws {
        let (manager, backend) = await poweredOn(.init(scanQueueCapacity: 10))
        let scan = try manager.scanForPeripherals(options: ScanOptions(allowDuplicates: true))
        for index in 0..<25 { backend.send(Self.appeared(index)) }
        for index in 0..<25 { backend.send(Self.report(index, round: 1)) }
        #expect(scan.counters.waiting == 10)
        #expect(scan.counters.dropped == 30, "15 devices beyond the capacity, twice each")
        #expect(scan.counters.merged == 10)
        #expect(manager.statistics.scans.dropped == 30)
    }

    @Test func aPrunedDevicesSignalsCauseAtMostOneRefreshInFlight() async throws {
        let options = CentralManager.Options(mirrorLimits: .init(maximumDevices: 1))
        let (manager, backend) = await poweredOn(options)
        backend.parkRefreshes.withLock { $0 = true }
        var calls = backend.calls.makeAsyncIterator()
        backend.send(Self.appeared(0))
        backend.send(Self.appeared(1))
        #expect(manager.statistics.mirror.counters.devicesEvicted == 1, "device 0 is the least recently heard")
        for round in 1...100 { backend.send(Self.report(0, round: round)) }
        while let call = await calls.next(), call != .refresh(Self.path(0)) {}
        var refreshes = manager.statistics.refreshes
        #expect(refreshes.requested == 100)
        #expect(refreshes.started == 1)
        #expect(refreshes.merged == 99)
        #expect(refreshes.inFlight == 1)

        // Ten more pruned devices: at most four refreshes at once, the others wait (one each).
        for index in 2..<12 {
            backend.send(Self.appeared(index))
        }
        for index in 1..<12 {
            for round in 1...3 { backend.send(Self.report(index, round: round)) }
        }
        refreshes = manager.statistics.refreshes
        #expect(refreshes.inFlight == 4)
        #expect(refreshes.waiting == 7)
        #expect(refreshes.started == 4)
        var started = 1
        while started < 4, let call = await calls.next() {
            if case .refresh = call { started += 1 }
        }
        #expect(backend.log.filter { $0 == .refresh(Self.path(0)) }.count == 1)
        backend.finish(0, with: .success([]))
        while let call = await calls.next() {
            if case .refresh = call { break }
        }
        #expect(manager.statistics.refreshes.started == 5, "a finished refresh starts the next waiting one")
    }

    @Test func unheardUnconnectedDevicesExpireOnTheClockAndConnectedOnesStay() async throws {
        let clock = ManualClock()
        let (manager, backend) = await poweredOn(
            .init(mirrorLimits: .init(staleDeviceAge: .seconds(30))), clock: clock)
        let t0 = clock.now
        backend.send(Self.appeared(0))
        backend.send(Self.appeared(1, connected: true))
        clock.advance(by: .seconds(20))
        backend.send(Self.appeared(2))
        clock.advance(by: .seconds(9))
        backend.send(Self.report(0, round: 1))  // heard at 29 s: expires at 59 s
        #expect(manager.retrievePeripherals(withIdentifiers: [Self.identifier(0)]).count == 1)

        // 2 was heard at 20 s: the timer drops it at 50 s, with nothing else on the bus, and sleeps until 59 s.
        clock.advance(by: .seconds(21))
        await clock.waitForSleeper(until: t0 + .seconds(59))
        let ids = [0, 1, 2].map { Self.identifier($0) }
        #expect(manager.retrievePeripherals(withIdentifiers: ids).map(\.identifier) == [ids[0], ids[1]])
        clock.advance(by: .seconds(120))
        backend.send(Self.appeared(3))
        await clock.waitForSleeper(until: clock.now + .seconds(30))
        #expect(
            manager.retrievePeripherals(withIdentifiers: ids + [Self.identifier(3)]).map(\.identifier)
                == [ids[1], Self.identifier(3)], "the connected device never expires")
        #expect(manager.statistics.mirror.counters.devicesExpired == 2)
    }

    @Test func aRemovedDeviceIsReportedAgainWhenItReturnsToAScanWithoutDuplicates() async throws {
        let (manager, backend) = await poweredOn()
        var scan = try manager.scanForPeripherals().makeAsyncIterator()
        backend.send(Self.appeared(0))
        #expect(await scan.next()?.identifier == Self.identifier(0))
        // bluetoothd's TemporaryTimeout ran out: it removes the device.
        backend.send(.delta(.interfacesRemoved(path: Self.path(0), interfaces: [BlueZInterface.device]), serial: nil))
        #expect(manager.retrievePeripherals(withIdentifiers: [Self.identifier(0)]).isEmpty)
        backend.send(Self.appeared(0))
        let again = await scan.next()
        #expect(again?.identifier == Self.identifier(0) && again?.reportCount == 1)
    }

    @Test func aCentralSeesReportsAndDrivesOnlyTheDevicesOfItsAdapter() async throws {
        let (manager, backend) = await poweredOn(.init(adapter: "hci1"))
        let connections = manager.connectionEvents()
        var scan = try manager.scanForPeripherals(options: ScanOptions(allowDuplicates: true)).makeAsyncIterator()
        // hci0's own visitor (a central connected in to hci0), and a device hci1 hears.
        backend.send(Self.appeared(1, adapter: Self.adapter0, connected: true))
        backend.send(Self.report(1, round: 1, adapter: Self.adapter0))
        backend.send(Self.appeared(2, adapter: Self.adapter1))
        let found = await scan.next()
        let own = Self.identifier(2, adapterAddress: "00:11:22:33:44:66")
        let other = Self.identifier(1)
        #expect(found?.identifier == own && found?.reportCount == 1, "hci0's devices are not reported")
        #expect(manager.retrievePeripherals(withIdentifiers: [other, own]).map(\.identifier) == [own])
        #expect(manager.retrieveConnectedPeripherals(withServices: []).isEmpty, "hci0's connected device is not ours")
        #expect(manager.statistics.otherAdapterReports == 2)
        #expect(manager.statistics.advertisementReports == 1)
        backend.send(
            .delta(
                .propertiesChanged(
                    path: Self.path(2, adapter: Self.adapter1), interface: BlueZInterface.device,
                    changed: ["Connected": .bool(true)], invalidated: []), serial: nil))
        var events = connections.makeAsyncIterator()
        #expect(await events.next() == .connected(own), "the first connection event is our own device's")
    }

    @Test func oversizedDeviceValuesAreRefusedAndTheDeviceIsStillReported() async throws {
        let (manager, backend) = await poweredOn()
        var scan = try manager.scanForPeripherals(options: ScanOptions(allowDuplicates: true)).makeAsyncIterator()
        backend.send(Self.appeared(1))
        // A broken or hostile BlueZ: a megabyte of manufacturer data with every report, and a megabyte name.
        let huge = PropertyValue.dictionary([.uint(0x59): .bytes(Array(repeating: 0xAB, count: 1 << 20))])
        for round in 1...8 {
            backend.send(
                .delta(
                    .propertiesChanged(
                        path: Self.path(1), interface: BlueZInterface.device,
                        changed: ["RSSI": .int(Int64(-50 - round)), "ManufacturerData": huge], invalidated: []),
                    serial: nil))
        }
        backend.send(
            .delta(
                .propertiesChanged(
                    path: Self.path(1), interface: BlueZInterface.device,
                    changed: ["Name": .string(String(repeating: "n", count: 1 << 20))], invalidated: []),
                serial: nil))
        let found = await scan.next()
        #expect(found?.reportCount == 10, "every signal about the device is still a report")
        #expect(found?.rssi == -58)
        #expect(found?.advertisement.manufacturerData.isEmpty == true)
        #expect(found?.advertisement.localName == "D1", "the name kept its value")
        #expect(manager.statistics.mirror.counters.oversizedValues == 9)
    }

    @Test func aNotificationConsumerThatFallsBehindPausesTheSocketAndResumesItOnceCaughtUp() async throws {
        let backend = FakeCentralBackend()
        let manager = CentralManager(
            backend: backend, options: .init(notificationQueueCapacity: 8), clock: ManualClock())
        backend.send(.bluetoothdPresent(true))
        backend.sendSnapshot(FakeTree.snapshot(connected: true, resolved: true))
        for await state in manager.stateUpdates() where state == .poweredOn { break }
        let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [FakeTree.identifier]).first)
        let service = try #require(try await peripheral.discoverServices([.heartRate]).first)
        let measurement = try #require(
            try await peripheral.discoverCharacteristics([.heartRateMeasurement], for: service).first)
        let values = peripheral.notifications(for: measurement)
        for value in 0..<4 {
            backend.send(.notification(characteristicPath: FakeTree.measurement, value: [UInt8(value)]))
        }
        #expect(backend.log.contains(.pauseNotifications(FakeTree.measurement, true)), "paused at half the capacity")
        // What still comes (read before the pause took effect) fills the buffer, then drops the oldest.
        for value in 4..<10 {
            backend.send(.notification(characteristicPath: FakeTree.measurement, value: [UInt8(value)]))
        }
        #expect(values.counters.waiting == 8)
        #expect(values.counters.dropped == 2)
        var iterator = values.makeAsyncIterator()
        var received: [UInt8] = []
        while received.count < 8, let value = await iterator.next() { received += value }
        #expect(received == (2..<10).map { UInt8($0) }, "in order, the oldest two dropped")
        #expect(backend.log.contains(.pauseNotifications(FakeTree.measurement, false)), "resumed once caught up")
        #expect(manager.statistics.notificationPauses == 1)
    }
}
