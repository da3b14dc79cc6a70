import BLE
import BLETesting
import GATT
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(1))) struct CentralManagerTests {
    let policy = GATTOperationPolicy(timeout: .seconds(30), maximumAttempts: 3, initialBackoff: .zero)

    func poweredOn(
        connected: Bool = true, resolved: Bool = true
    ) async -> (CentralManager, FakeCentralBackend, ManualClock) {
        let backend = FakeCentralBackend()
        let clock = ManualClock()
        let manager = CentralManager(backend: backend, options: .init(operationPolicy: policy), clock: clock)
        backend.send(.bluetoothdPresent(true))
        backend.sendSnapshot(FakeTree.snapshot(connected: connected, resolved: resolved))
        for await state in manager.stateUpdates() where state == .poweredOn { break }
        return (manager, backend, clock)
    }

    func waitFor(_ wanted: FakeCentralBackend.Call, in calls: inout AsyncStream<FakeCentralBackend.Call>.Iterator) async
    {
        while let call = await calls.next() {
            if call == wanted { return }
        }
    }

    func characteristics(of peripheral: Peripheral) async throws -> [BluetoothUUID: RemoteCharacteristic] {
        let services = try await peripheral.discoverServices([.heartRate])
        let found = try await peripheral.discoverCharacteristics(for: try #require(services.first))
        return Dictionary(uniqueKeysWithValues: found.map { ($0.uuid, $0) })
    }

    /// The task's value; cancelling the test (its time limit) cancels the task,
    /// so a missing wake-up fails the test instead of hanging it.
    func valueCancellingWithTest<Value: Sendable>(_ task: Task<Value, Never>) async -> Value {
        await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
    }

    @Test func aCancelledCallerFailsWithCancelledAndTheNextOperationStarts() async throws {
        let (manager, backend, _) = await poweredOn()
        let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [FakeTree.identifier]).first)
        let bodySensor = try #require(try await characteristics(of: peripheral)[.bodySensorLocation])
        var calls = backend.calls.makeAsyncIterator()
        let read: @Sendable () async -> Result<[UInt8], BLEError> = {
            do throws(BLEError) { return .success(try await peripheral.readValue(for: bodySensor)) } catch {
                return .failure(error)
            }
        }
        let first = Task { await read() }
        await waitFor(.read(FakeTree.bodySensor), in: &calls)
        let second = Task { await read() }
        first.cancel()
        #expect(await valueCancellingWithTest(first) == .failure(.cancelled))
        await waitFor(.read(FakeTree.bodySensor), in: &calls)
        backend.finish(1, with: .success([3]))
        #expect(await valueCancellingWithTest(second) == .success([3]))
        backend.finish(0, with: .success([9]))
    }

    @Test func stateFollowsBluetoothdAndTheAdapterAndGatesOperations() async throws {
        let backend = FakeCentralBackend()
        let manager = CentralManager(backend: backend, clock: ManualClock())
        var states = manager.stateUpdates().makeAsyncIterator()
        var calls = backend.calls.makeAsyncIterator()
        #expect(await states.next() == .unknown)
        backend.send(.bluetoothdPresent(true))
        await waitFor(.requestSnapshot, in: &calls)
        backend.sendSnapshot(FakeTree.snapshot(powered: false))
        #expect(await states.next() == .poweredOff)
        #expect(throws: BLEError.poweredOff) { _ = try manager.scanForPeripherals() }
        backend.send(
            .delta(
                .propertiesChanged(
                    path: FakeTree.adapter, interface: BlueZInterface.adapter, changed: ["Powered": .bool(true)],
                    invalidated: []), serial: nil))
        #expect(await states.next() == .poweredOn)
        backend.send(.bluetoothdPresent(false))
        #expect(await states.next() == .resetting)
        #expect(backend.log.first == .requestSnapshot, "the tree is read when bluetoothd appears")
    }

    @Test func scansShareOneDiscoveryAndEachSeesItsOwnDeduplicatedDiscoveries() async throws {
        let (manager, backend, _) = await poweredOn(connected: false, resolved: false)
        var calls = backend.calls.makeAsyncIterator()
        var onlyHeartRate = try manager.scanForPeripherals(withServices: [.heartRate]).makeAsyncIterator()
        var everything = try manager.scanForPeripherals(options: ScanOptions(allowDuplicates: true)).makeAsyncIterator()
        // The consumers keep up (each report is read before the next is sent): nothing is merged.
        backend.send(FakeTree.deviceChanged(["RSSI": .int(-45)]))
        let first = await onlyHeartRate.next()
        #expect(first?.identifier == FakeTree.identifier)
        #expect(first?.name == "HR Sensor")
        #expect(first?.rssi == -45)
        #expect(first?.reportCount == 1)
        #expect(await everything.next()?.rssi == -45)
        backend.send(FakeTree.deviceChanged(["RSSI": .int(-44)]))
        #expect(await everything.next()?.rssi == -44)
        backend.send(FakeTree.deviceChanged(["ManufacturerData": .dictionary([.uint(0x59): .bytes([7])])]))
        let second = await onlyHeartRate.next()
        #expect(
            second?.rssi == -44 && second?.advertisement.manufacturerData[0x59] == [7] && second?.reportCount == 1,
            "an RSSI-only change is coalesced")
        let third = await everything.next()
        #expect(third?.advertisement.manufacturerData[0x59] == [7] && third?.reportCount == 1)
        manager.stopScan()
        await waitFor(.stopDiscovery, in: &calls)
        #expect(backend.log.filter { $0 == .startDiscovery }.count == 1)
        #expect(backend.log.filter { $0 == .stopDiscovery }.count == 1)
        #expect(backend.log.contains(.requestSnapshot))
        let filters = backend.log.filter { if case .setDiscoveryFilter = $0 { true } else { false } }
        #expect(filters.first == .setDiscoveryFilter(DiscoveryFilter(uuids: [.heartRate])))
    }

    @Test(
        "a scan without duplicates reports a device again only when what it advertises changed, not for a change of its RSSI, alias or flags alone"
    )
    func aScanWithoutDuplicatesReportsEachChangeOfTheAdvertisementOnce() async throws {
        let (manager, backend, _) = await poweredOn(connected: false, resolved: false)
        var deduplicated = try manager.scanForPeripherals().makeAsyncIterator()
        var everything = try manager.scanForPeripherals(options: ScanOptions(allowDuplicates: true)).makeAsyncIterator()
        backend.send(FakeTree.deviceChanged(["RSSI": .int(-45), "AdvertisingFlags": .bytes([0x06])]))
        #expect(await deduplicated.next()?.advertisement.isConnectable == true)
        #expect(await everything.next()?.rssi == -45)
        // Named, so a new alias does not change its local name; 0x02 is connectable like 0x06.
        backend.send(
            FakeTree.deviceChanged([
                "RSSI": .int(-44), "Alias": .string("Kitchen"), "AdvertisingFlags": .bytes([0x02]),
            ]))
        #expect(await everything.next()?.rssi == -44)
        backend.send(FakeTree.deviceChanged(["RSSI": .int(-43), "TxPower": .int(4)]))
        #expect(await everything.next()?.rssi == -43)
        let changed = await deduplicated.next()
        #expect(changed?.rssi == -43 && changed?.advertisement.txPower == 4 && changed?.reportCount == 1)
        backend.send(FakeTree.deviceChanged(["RSSI": .int(-42), "Name": .string("Renamed")]))
        #expect(await everything.next()?.rssi == -42)
        #expect(await deduplicated.next()?.name == "Renamed")
    }

    func setPowered(_ powered: Bool, _ backend: FakeCentralBackend) {
        backend.send(
            .delta(
                .propertiesChanged(
                    path: FakeTree.adapter, interface: BlueZInterface.adapter, changed: ["Powered": .bool(powered)],
                    invalidated: []), serial: nil))
    }

    @Test func aScanEndsSayingWhyWhenTheAdapterPowersOffOrBluetoothdLeavesOrTheCallerStops() async throws {
        let (manager, backend, _) = await poweredOn()
        var calls = backend.calls.makeAsyncIterator()
        let scan = try manager.scanForPeripherals()
        await waitFor(.startDiscovery, in: &calls)
        #expect(scan.end == nil)
        setPowered(false, backend)
        for await _ in scan {}
        #expect(scan.end == .poweredOff)
        #expect(!manager.isScanning)
        setPowered(true, backend)
        let again = try manager.scanForPeripherals()
        await waitFor(.startDiscovery, in: &calls)
        backend.send(.bluetoothdPresent(false))
        for await _ in again {}
        #expect(again.end == .bluetoothdGone)
        #expect(!backend.log.contains(.stopDiscovery), "BlueZ forgot the discovery: nothing to stop")
        backend.send(.bluetoothdPresent(true))
        backend.sendSnapshot(FakeTree.snapshot())
        let third = try manager.scanForPeripherals()
        manager.stopScan()
        for await _ in third {}
        #expect(third.end == .stopped)
        await waitFor(.stopDiscovery, in: &calls)
    }

    @Test func scanWhilePoweredOnScansAgainAfterAPowerCycleAndReportsEachEnd() async throws {
        let (manager, backend, _) = await poweredOn()
        var calls = backend.calls.makeAsyncIterator()
        let (events, sink) = AsyncStream<CentralManager.ScanLoopEvent>.makeStream()
        let loop = Task {
            await manager.scanWhilePoweredOn(withServices: nil, options: ScanOptions(), onChange: { sink.yield($0) }) {
                _ in
            }
        }
        var seen = events.makeAsyncIterator()
        #expect(await seen.next() == .scanning)
        await waitFor(.startDiscovery, in: &calls)
        setPowered(false, backend)
        #expect(await seen.next() == .ended(.poweredOff))
        setPowered(true, backend)
        #expect(await seen.next() == .scanning)
        await waitFor(.startDiscovery, in: &calls)
        #expect(backend.log.filter { $0 == .startDiscovery }.count == 2)
        manager.stopScan()
        #expect(await seen.next() == .ended(.stopped))
        await valueCancellingWithTest(loop)
        sink.finish()
        #expect(await seen.next() == nil, "a scan stopped by the caller ends the loop")
    }

    @Test func scanWhilePoweredOnWaitsForPowerHandsOnDiscoveriesWithTheAddressAndEndsWithItsTask() async throws {
        let backend = FakeCentralBackend()
        let manager = CentralManager(backend: backend, clock: ManualClock())
        var calls = backend.calls.makeAsyncIterator()
        backend.send(.bluetoothdPresent(true))
        backend.sendSnapshot(FakeTree.snapshot(powered: false))
        let (found, sink) = AsyncStream<Discovery>.makeStream()
        let (events, eventSink) = AsyncStream<String>.makeStream()
        let loop = Task {
            await manager.scanWhilePoweredOn(
                withServices: nil, options: ScanOptions(allowDuplicates: true),
                onChange: { event in
                    if case .scanning = event { eventSink.yield("scanning") }
                }
            ) { discovery in sink.yield(discovery) }
            eventSink.yield("ended")
        }
        var eventIterator = events.makeAsyncIterator()
        backend.send(
            .delta(
                .propertiesChanged(
                    path: FakeTree.adapter, interface: BlueZInterface.adapter, changed: ["Powered": .bool(true)],
                    invalidated: []), serial: nil))
        #expect(await eventIterator.next() == "scanning")
        await waitFor(.startDiscovery, in: &calls)
        backend.send(FakeTree.deviceChanged(["RSSI": .int(-57)]))
        var discoveries = found.makeAsyncIterator()
        let first = await discoveries.next()
        #expect(first?.address == "AA:BB:CC:DD:EE:FF" && first?.rssi == -57, "\(String(describing: first))")
        loop.cancel()
        #expect(await eventIterator.next() == "ended")
        await waitFor(.stopDiscovery, in: &calls)
    }

    @Test func aReadIsRetriedAfterInProgressAndReturnsTheValue() async throws {
        let (manager, backend, _) = await poweredOn()
        let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [FakeTree.identifier]).first)
        let bodySensor = try #require(try await characteristics(of: peripheral)[.bodySensorLocation])
        backend.answers.withLock { $0 = [.failure(BLEError(bluez: BlueZError(.inProgress))), .success([1])] }
        #expect(try await peripheral.readValue(for: bodySensor) == [1])
        #expect(backend.log.filter { $0 == .read(FakeTree.bodySensor) }.count == 2)
    }

    @Test func aLinkDropFailsPendingOperationsPromptlyWithNotConnected() async throws {
        let (manager, backend, _) = await poweredOn()
        let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [FakeTree.identifier]).first)
        let bodySensor = try #require(try await characteristics(of: peripheral)[.bodySensorLocation])
        var calls = backend.calls.makeAsyncIterator()
        let read: @Sendable () async -> Result<[UInt8], BLEError> = {
            do throws(BLEError) { return .success(try await peripheral.readValue(for: bodySensor)) } catch {
                return .failure(error)
            }
        }
        let first = Task { await read() }
        let second = Task { await read() }
        await waitFor(.read(FakeTree.bodySensor), in: &calls)
        backend.send(FakeTree.deviceChanged(["Connected": .bool(false), "ServicesResolved": .bool(false)]))
        #expect(await valueCancellingWithTest(first) == .failure(.notConnected))
        #expect(await valueCancellingWithTest(second) == .failure(.notConnected))
        #expect(backend.log.filter { $0 == .read(FakeTree.bodySensor) }.count == 1, "the second never reached BlueZ")
        backend.finish(0, with: .success([9]))
        #expect(peripheral.state == .disconnected)
    }

    @Test func subscriptionsAreRestoredOnceAfterReconnectWithNoLostOrDoubledNotification() async throws {
        let (manager, backend, _) = await poweredOn()
        let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [FakeTree.identifier]).first)
        let measurement = try #require(try await characteristics(of: peripheral)[.heartRateMeasurement])
        var values = peripheral.notifications(for: measurement).makeAsyncIterator()
        var calls = backend.calls.makeAsyncIterator()
        try await peripheral.setNotifyValue(true, for: measurement)
        #expect(peripheral.isNotifying(measurement))
        backend.send(FakeTree.deviceChanged(["Connected": .bool(false), "ServicesResolved": .bool(false)]))
        backend.send(FakeTree.deviceChanged(["Connected": .bool(true)]))
        backend.send(FakeTree.deviceChanged(["ServicesResolved": .bool(true)]))
        await waitFor(.startNotify(FakeTree.measurement), in: &calls)
        await waitFor(.startNotify(FakeTree.measurement), in: &calls)
        for value: UInt8 in [1, 2] {
            backend.send(
                .delta(
                    .propertiesChanged(
                        path: FakeTree.measurement, interface: BlueZInterface.gattCharacteristic,
                        changed: ["Notifying": .bool(true), "Value": .bytes([0, value])], invalidated: []), serial: nil)
            )
        }
        #expect(await values.next() == [0, 1])
        #expect(await values.next() == [0, 2])
        #expect(backend.log.filter { $0 == .startNotify(FakeTree.measurement) }.count == 2)
    }

    /// bluetoothd 5.66 (seen in the VM, Tests/VM/scenarios.sh) sometimes
    /// signals ServicesResolved before the InterfacesAdded of every service. Without the snapshot the manager asks for, discoverServices
    /// returned [] and the restored subscription failed (no characteristic yet).
    @Test func servicesResolvedBeforeTheServicesArriveWaitsForTheSnapshot() async throws {
        let full = FakeTree.snapshot(connected: true, resolved: true)
        let (manager, backend, _) = await poweredOn()
        let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [FakeTree.identifier]).first)
        let measurement = try #require(try await characteristics(of: peripheral)[.heartRateMeasurement])
        var calls = backend.calls.makeAsyncIterator()
        try await peripheral.setNotifyValue(true, for: measurement)
        await waitFor(.startNotify(FakeTree.measurement), in: &calls)
        // The link drops; bluetoothd removes the GATT objects with it.
        backend.send(FakeTree.deviceChanged(["Connected": .bool(false), "ServicesResolved": .bool(false)]))
        for path in full.keys where path.hasPrefix(FakeTree.device + "/") {
            backend.send(
                .delta(.interfacesRemoved(path: path, interfaces: Array(full[path, default: [:]].keys)), serial: nil))
        }
        // Reconnected: ServicesResolved comes first, the services are only in GetManagedObjects' reply.
        backend.snapshotReply.withLock { $0 = full }
        backend.send(FakeTree.deviceChanged(["Connected": .bool(true)]))
        backend.send(FakeTree.deviceChanged(["ServicesResolved": .bool(true)]))
        let services = try await peripheral.discoverServices()
        #expect(services.map(\.uuid).contains(.heartRate), "\(services)")
        await waitFor(.requestSnapshot, in: &calls)
        await waitFor(.startNotify(FakeTree.measurement), in: &calls)
        #expect(backend.log.filter { $0 == .startNotify(FakeTree.measurement) }.count == 2, "restored once")
    }

    @Test func setNotifyValueWaitsForTheRestoreStillStartingAfterAReconnect() async throws {
        let (manager, backend, _) = await poweredOn()
        let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [FakeTree.identifier]).first)
        let measurement = try #require(try await characteristics(of: peripheral)[.heartRateMeasurement])
        var calls = backend.calls.makeAsyncIterator()
        try await peripheral.setNotifyValue(true, for: measurement)
        await waitFor(.startNotify(FakeTree.measurement), in: &calls)
        backend.parkStartNotify.withLock { $0 = true }
        backend.send(FakeTree.deviceChanged(["Connected": .bool(false), "ServicesResolved": .bool(false)]))
        backend.send(FakeTree.deviceChanged(["Connected": .bool(true)]))
        backend.send(FakeTree.deviceChanged(["ServicesResolved": .bool(true)]))
        // The manager's own restore is now parked in StartNotify. It ends only later: a caller that
        // returns before then returned while BlueZ was not notifying yet. (The delay only lets a
        // wrong early return show; the right behaviour waits for the event, however late.)
        await waitFor(.startNotify(FakeTree.measurement), in: &calls)
        let finished = Mutex(false)
        let finisher = Task {
            try? await Task.sleep(for: .milliseconds(300))
            finished.withLock { $0 = true }
            backend.finish(0, with: .success([]))
        }
        try await peripheral.setNotifyValue(true, for: measurement)
        #expect(finished.withLock { $0 }, "setNotifyValue(true) returned while the restore was still starting")
        await finisher.value
        #expect(backend.log.filter { $0 == .startNotify(FakeTree.measurement) }.count == 2, "no third StartNotify")
    }

    @Test func aWriteWithoutResponseAboveTheMTUIsRefusedBeforeBlueZ() async throws {
        let (manager, backend, _) = await poweredOn()
        let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [FakeTree.identifier]).first)
        let bodySensor = try #require(try await characteristics(of: peripheral)[.bodySensorLocation])
        #expect(peripheral.maximumWriteValueLength(for: .withoutResponse, characteristic: bodySensor) == 20)
        await #expect(throws: BLEError(.invalidLength, message: "21 bytes exceed the maximum write length")) {
            try await peripheral.writeValue(Array(repeating: 0, count: 21), for: bodySensor, type: .withoutResponse)
        }
        backend.answers.withLock { $0 = [.success([]), .success([])] }
        try await peripheral.writeValueInChunks(Array(repeating: 1, count: 30), for: bodySensor)
        #expect(
            backend.log.filter { if case .write = $0 { true } else { false } } == [
                .write(FakeTree.bodySensor, Array(repeating: 1, count: 20), .withoutResponse),
                .write(FakeTree.bodySensor, Array(repeating: 1, count: 10), .withoutResponse),
            ])
    }

    @Test func writeWithoutResponseFlowFollowsTheBackendAndReportsEachDrain() async throws {
        let (manager, backend, _) = await poweredOn()
        let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [FakeTree.identifier]).first)
        #expect(peripheral.canSendWriteWithoutResponse)
        var ready = peripheral.readyToSendWriteWithoutResponse().makeAsyncIterator()
        // The AcquireWrite socket is full: the backend says so, the peripheral follows.
        backend.send(.writeWithoutResponseFlow(devicePath: FakeTree.device, canSend: false))
        while peripheral.canSendWriteWithoutResponse { await Task.yield() }  // bounded by the suite's limit
        backend.send(.writeWithoutResponseFlow(devicePath: FakeTree.device, canSend: true))
        #expect(await ready.next() != nil, "one ready event for the drain")
        #expect(peripheral.canSendWriteWithoutResponse)
    }

    @Test func serviceDiscoveryProgressFollowsConnectedAndServicesResolved() async throws {
        let (manager, backend, _) = await poweredOn(connected: true, resolved: false)
        let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [FakeTree.identifier]).first)
        #expect(peripheral.serviceDiscoveryState == .discovering)
        backend.send(FakeTree.deviceChanged(["ServicesResolved": .bool(true)]))
        while peripheral.serviceDiscoveryState != .discovered { await Task.yield() }  // bounded by the suite's limit
        backend.send(FakeTree.deviceChanged(["ServicesResolved": .bool(false), "Connected": .bool(false)]))
        while peripheral.serviceDiscoveryState != .idle { await Task.yield() }
        #expect(peripheral.serviceDiscoveryState == .idle)
    }

    @Test func aReadOnACharacteristicWithoutReadIsRefused() async throws {
        let (manager, _, _) = await poweredOn()
        let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [FakeTree.identifier]).first)
        let measurement = try #require(try await characteristics(of: peripheral)[.heartRateMeasurement])
        await #expect(throws: BLEError(.operationNotSupported, message: "characteristic has no read property")) {
            try await peripheral.readValue(for: measurement)
        }
    }

    @Test(
        "with the default limits a peripheral without a signal for minutes stays (bluetoothd keeps what it hears unchanged) until bluetoothd removes it"
    )
    func silentPeripheralsStayUntilBluetoothdRemovesThem() async throws {
        let backend = FakeCentralBackend()
        let clock = ManualClock()
        let manager = CentralManager(backend: backend, clock: clock)
        var states = manager.stateUpdates().makeAsyncIterator()
        backend.send(.bluetoothdPresent(true))
        backend.sendSnapshot(FakeTree.snapshot())
        while await states.next() != .poweredOn {}
        clock.advance(by: .seconds(600))
        backend.send(Self.adapterPowered(false))
        #expect(await states.next() == .poweredOff)
        #expect(manager.retrievePeripherals(withIdentifiers: [FakeTree.identifier]).count == 1)
        backend.send(
            .delta(.interfacesRemoved(path: FakeTree.device, interfaces: [BlueZInterface.device]), serial: nil))
        backend.send(Self.adapterPowered(true))
        #expect(await states.next() == .poweredOn)
        #expect(manager.retrievePeripherals(withIdentifiers: [FakeTree.identifier]).isEmpty)
        #expect(manager.statistics.mirror.counters.devicesExpired == 0)
    }

    static func adapterPowered(_ powered: Bool) -> CentralBackendEvent {
        .delta(
            .propertiesChanged(
                path: FakeTree.adapter, interface: BlueZInterface.adapter, changed: ["Powered": .bool(powered)],
                invalidated: []), serial: nil)
    }

    @Test func staleUnconnectedPeripheralsAreDroppedFromTheMirror() async throws {
        let backend = FakeCentralBackend()
        let clock = ManualClock()
        let options = CentralManager.Options(mirrorLimits: .init(staleDeviceAge: .seconds(60)))
        let manager = CentralManager(backend: backend, options: options, clock: clock)
        var states = manager.stateUpdates().makeAsyncIterator()
        backend.send(.bluetoothdPresent(true))
        backend.sendSnapshot(FakeTree.snapshot())
        while await states.next() != .poweredOn {}
        #expect(manager.retrievePeripherals(withIdentifiers: [FakeTree.identifier]).count == 1)
        clock.advance(by: .seconds(61))
        backend.send(
            .delta(
                .propertiesChanged(
                    path: FakeTree.adapter, interface: BlueZInterface.adapter, changed: ["Powered": .bool(false)],
                    invalidated: []), serial: nil))
        #expect(await states.next() == .poweredOff)
        #expect(manager.retrievePeripherals(withIdentifiers: [FakeTree.identifier]).isEmpty)
    }
}
