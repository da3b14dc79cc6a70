import BLE
import BLETesting
import GATT
import Testing

/// The central manager's passive scans over a scripted backend: what it asks BlueZ for, and how bluetoothd's
/// calls on the monitor (Activate, Release, DeviceFound, DeviceLost) change what the scan reports and how it runs.
@Suite("Passive scans of the central manager", .timeLimit(.minutes(1)))
struct PassiveScanTests {
    func poweredOn() async -> (CentralManager, FakeCentralBackend) {
        let backend = FakeCentralBackend()
        let manager = CentralManager(backend: backend)
        backend.send(.bluetoothdPresent(true))
        backend.sendSnapshot(FakeTree.snapshot())
        for await state in manager.stateUpdates() where state == .poweredOn { break }
        return (manager, backend)
    }

    func options() throws -> ScanOptions {
        ScanOptions(allowDuplicates: true, monitor: AdvertisementMonitor(patterns: [try .serviceData16(0x180D)]))
    }

    /// The scan id of the first monitor registration.
    func registration(_ backend: FakeCentralBackend) async -> UInt64? {
        for await call in backend.calls {
            if case .registerMonitor(FakeTree.adapter, let scan) = call { return scan }
        }
        return nil
    }

    @Test("a passive scan registers a monitor, no discovery, and reports only what the monitor found once active")
    func reportsWhatTheMonitorFound() async throws {
        let (manager, backend) = await poweredOn()
        let scan = try manager.scanForPeripherals(options: try options())
        #expect(scan.mode == .passivePending)
        let id = try #require(await registration(backend))
        backend.send(FakeTree.deviceChanged(["RSSI": .int(-40)]))
        backend.send(.monitor(scan: id, .activated))
        #expect(scan.mode == .passive)
        backend.send(.monitor(scan: id, .deviceFound(FakeTree.device)))
        let found = await first(scan) { _ in true }
        #expect(found?.identifier == FakeTree.identifier, "the device found is reported from the mirror at once")
        #expect(!backend.log.contains(.startDiscovery), "\(backend.log)")
        #expect(manager.isScanning && manager.statistics.monitorDevicesFound == 1)
        manager.stopScan()
        for await _ in scan {}
        #expect(await first(backend.calls) { $0 == .unregisterMonitor(scan: id) } != nil)
    }

    @Test("DeviceLost drops a found device until DeviceFound comes again, and both are counted once per change")
    func lostUntilFoundAgain() async throws {
        let (manager, backend) = await poweredOn()
        let scan = try manager.scanForPeripherals(options: try options())
        let id = try #require(await registration(backend))
        backend.send(FakeTree.deviceChanged(["RSSI": .int(-40)]))
        backend.send(.monitor(scan: id, .activated))
        backend.send(.monitor(scan: id, .deviceFound(FakeTree.device)))
        var reports = scan.makeAsyncIterator()
        #expect(await reports.next()?.rssi == -40)
        backend.send(.monitor(scan: id, .deviceLost(FakeTree.device)))
        backend.send(.monitor(scan: id, .deviceLost(FakeTree.device)))
        backend.send(FakeTree.deviceChanged(["RSSI": .int(-45)]))
        backend.send(FakeTree.deviceChanged(["RSSI": .int(-46)]))
        backend.send(.monitor(scan: id, .deviceFound(FakeTree.device)))
        let again = await reports.next()
        // Had the changes while lost been reported, the scan's queue would have merged them: a count of 2.
        #expect(again?.rssi == -46 && again?.reportCount == 1, "nothing while lost; found again, the newest state")
        #expect(manager.statistics.monitorDevicesFound == 2)
        #expect(manager.statistics.monitorDevicesLost == 1, "a second DeviceLost of a lost device is not counted")
    }

    @Test("a device the monitor did not find is not reported")
    func ignoresDevicesNotFound() async throws {
        let (manager, backend) = await poweredOn()
        let scan = try manager.scanForPeripherals(options: try options())
        let id = try #require(await registration(backend))
        backend.send(.monitor(scan: id, .activated))
        backend.send(FakeTree.deviceChanged(["RSSI": .int(-41)]))
        manager.stopScan()
        var reported: [Discovery] = []
        for await discovery in scan { reported.append(discovery) }
        #expect(reported.isEmpty)
    }

    @Test("Release before Activate: the scan falls back to discovery, says why, and withdraws its monitor")
    func releaseBeforeActivateFallsBack() async throws {
        let (manager, backend) = await poweredOn()
        let scan = try manager.scanForPeripherals(options: try options())
        let id = try #require(await registration(backend))
        backend.send(.monitor(scan: id, .released))
        #expect(scan.mode == .fallback(reason: "bluetoothd released the advertisement monitor before activating it"))
        #expect(await first(backend.calls) { $0 == .startDiscovery } != nil)
        #expect(backend.log.contains(.unregisterMonitor(scan: id)))
        backend.send(FakeTree.deviceChanged(["RSSI": .int(-42)]))
        #expect(await first(scan) { _ in true }?.identifier == FakeTree.identifier, "discovery reports every device")
        #expect(manager.statistics.monitorFallbacks == 1)
    }

    @Test("a refused registration falls back with the backend's reason")
    func refusedRegistrationFallsBack() async throws {
        let (manager, backend) = await poweredOn()
        backend.monitorRefusals.withLock {
            $0 = [BLEError(.operationNotSupported, message: "hci0 has no AdvertisementMonitorManager1")]
        }
        let scan = try manager.scanForPeripherals(options: try options())
        let mode = await first(scan.modeUpdates()) { !$0.isPassive }
        #expect(mode == .fallback(reason: "hci0 has no AdvertisementMonitorManager1"))
        #expect(await first(backend.calls) { $0 == .startDiscovery } != nil)
    }

    @Test("a monitor without patterns is refused")
    func refusesAMonitorWithoutPatterns() async throws {
        let (manager, _) = await poweredOn()
        #expect(throws: BLEError.self) {
            try manager.scanForPeripherals(options: ScanOptions(monitor: AdvertisementMonitor(patterns: [])))
        }
    }
}
