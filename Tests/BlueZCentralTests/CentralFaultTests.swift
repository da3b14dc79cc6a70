import BLE
import BLETesting
import BlueZ
import DBus
import GATT
import Synchronization
import Testing

/// Faults injected with blesim's org.blesim.Control1 into a CentralManager over
/// BlueZCentralBackend (see ``FaultRig``).
@Suite("CentralManager over blesim under injected faults", .serialized, .timeLimit(.minutes(1)))
struct CentralFaultTests {
    static let hrm = DBusValue.string(FaultRig.hrmAddress)

    @Test("a link dropped mid-write fails the write and every other pending operation at once with notConnected")
    func linkDroppedMidWrite() async throws {
        try await FaultRig.with { rig in
            let sim = try await rig.startSim()
            defer { sim.stop() }
            // A deadline far beyond the test: only the link drop can end these operations in time.
            let central = try await rig.central(options: .init(operationPolicy: .init(timeout: .seconds(50))))
            let (peripheral, characteristics) = try await FaultRig.connectedHRM(central)
            let note = try #require(characteristics[FaultRig.note])
            let sensor = try #require(characteristics[FaultRig.bodySensor])
            try await rig.control("SetDelay", [Self.hrm, .double(50)])
            // The write first, in flight at blesim before the reads start: the read of its characteristic queues
            // behind it in the manager. A read that reaches the manager only after the drop fails as promptly.
            let write = Task {
                await errorCode { () async throws(BLEError) in
                    try await peripheral.writeValue(Array("first".utf8), for: note, type: .withResponse)
                }
            }
            try await rig.waitForWriteInFlight(note.objectPath)
            let queuedBehind = Task {
                await errorCode { () async throws(BLEError) in try await peripheral.readValue(for: note) }
            }
            let otherAttribute = Task {
                await errorCode { () async throws(BLEError) in try await peripheral.readValue(for: sensor) }
            }
            try await rig.control("DropLink", [Self.hrm])
            let (written, queued, other) = (await write.value, await queuedBehind.value, await otherAttribute.value)
            #expect(written == .notConnected, "\(String(describing: written))")
            #expect(queued == .notConnected, "\(String(describing: queued))")
            #expect(other == .notConnected, "\(String(describing: other))")
        }
    }

    @Test("InProgress once is retried with backoff and returns the value; InProgress past the budget is inProgress")
    func inProgressIsRetried() async throws {
        try await FaultRig.with { rig in
            let sim = try await rig.startSim()
            defer { sim.stop() }
            let policy = GATTOperationPolicy(maximumAttempts: 3, initialBackoff: .milliseconds(40))
            let central = try await rig.central(options: .init(operationPolicy: policy))
            let (peripheral, characteristics) = try await FaultRig.connectedHRM(central)
            let sensor = try #require(characteristics[FaultRig.bodySensor])
            let inProgress: [DBusValue] = [.string("org.bluez.Error.InProgress"), .string("In Progress")]
            try await rig.control("FailNext", [Self.hrm, .string("2A38"), .uint32(1)] + inProgress)
            let clock = ContinuousClock()
            let start = clock.now
            #expect(try await peripheral.readValue(for: sensor) == [1])
            #expect(clock.now - start >= .milliseconds(40), "the retry waited out the first backoff")
            try await rig.control("FailNext", [Self.hrm, .string("2A38"), .uint32(3)] + inProgress)
            let exhausted = clock.now
            #expect(
                await errorCode { () async throws(BLEError) in try await peripheral.readValue(for: sensor) }
                    == .inProgress)
            #expect(clock.now - exhausted >= .milliseconds(120), "two backoffs, 40 then 80 ms")
            #expect(try await peripheral.readValue(for: sensor) == [1], "exactly the budget was spent")
        }
    }

    @Test("an operation never answered fails with timeout at its deadline; the characteristic then works")
    func timeoutThenTheCharacteristicWorks() async throws {
        try await FaultRig.with { rig in
            let sim = try await rig.startSim()
            defer { sim.stop() }
            let central = try await rig.central(options: .init(operationPolicy: .init(timeout: .seconds(1))))
            let (peripheral, characteristics) = try await FaultRig.connectedHRM(central)
            let note = try #require(characteristics[FaultRig.note])
            try await rig.control(
                "FailNext", [Self.hrm, .string(FaultRig.note.description), .uint32(1), .string("timeout"), .string("")])
            let clock = ContinuousClock()
            let start = clock.now
            #expect(
                await errorCode { () async throws(BLEError) in try await peripheral.readValue(for: note) } == .timeout)
            #expect(clock.now - start >= .seconds(1), "not before the deadline")
            // blesim keeps the unanswered read in flight (a read of the same offset would join it, as
            // bluetoothd's read_op does), so the next operation is a write on the same characteristic:
            // it runs only because the manager's queue let the expired read go.
            try await peripheral.writeValue(Array("after".utf8), for: note, type: .withResponse)
            #expect(peripheral.state == .connected)
        }
    }

    @Test(
        "a power cycle: the scan ends with poweredOff, the scan loop scans again, the link and its subscription come back once"
    )
    func powerCycleRestoresScanConnectionAndSubscription() async throws {
        try await FaultRig.with { rig in
            let sim = try await rig.startSim()
            defer { sim.stop() }
            let central = try await rig.central()
            let states = central.stateUpdates()
            let scan = try central.scanForPeripherals(options: ScanOptions(allowDuplicates: true))
            let loop = FaultRig.scanLoop(central)
            defer { loop.task.cancel() }
            let peripheral = try await FaultRig.findHRM(central, on: scan)
            let counter = try #require(try await FaultRig.connect(peripheral, with: central)[FaultRig.counter])
            var values = peripheral.notifications(for: counter).makeAsyncIterator()
            try await peripheral.setNotifyValue(true, for: counter)
            #expect(isGapless(await FaultRig.take(10, from: &values)))
            let subscribes = try await rig.subscribeCount(of: counter.objectPath)
            let discovering = try await rig.discoveringStarts()
            let connections = central.connectionEvents()
            // Powered false, then true, as bluetoothd does it. (Control1.PowerCycle sends one coalesced
            // PropertiesChanged with Powered true and never false: a client cannot see that cycle.)
            try await rig.setPowered(false)
            #expect(await first(states) { $0 == .poweredOff } == .poweredOff)
            for await _ in scan {}
            #expect(scan.end == .poweredOff, "the plain scan says why it ended")
            #expect(await first(loop.events) { $0 == .ended(.poweredOff) } != nil)
            try await rig.setPowered(true)
            #expect(await first(states) { $0 == .poweredOn } == .poweredOn)
            #expect(await first(loop.events) { $0 == .scanning } != nil, "the loop scans again")
            #expect(await first(discovering) { true } != nil, "discovery started again")
            #expect(central.isScanning)
            let id = peripheral.identifier
            #expect(await first(connections) { Self.isConnected($0, id) } != nil, "the wanted link came back")
            try await Self.expectRestoredOnce(&values, subscribes: subscribes)
        }
    }

    @Test(
        "a plain link loss (adapter still on): the wanted peripheral is reconnected by the manager, its subscription restored exactly once"
    )
    func linkLossReconnects() async throws {
        try await FaultRig.with { rig in
            let sim = try await rig.startSim()
            defer { sim.stop() }
            let central = try await rig.central()
            let (peripheral, counterValues, subscribes) = try await rig.subscribedCounter(central)
            var values = counterValues
            let connections = central.connectionEvents()
            let id = peripheral.identifier
            try await rig.control("DropLink", [Self.hrm])
            let events = await FaultRig.collect(connections) { $0.last.map { Self.isConnected($0, id) } ?? false }
            #expect(events.first == .disconnected(id, .notConnected), "\(events)")
            #expect(events.last == .connected(id), "reconnected with no call from the test: \(events)")
            #expect(central.currentState == .poweredOn)
            try await Self.expectRestoredOnce(&values, subscribes: subscribes)
        }
    }

    @Test(
        "a link that comes up without a Connected signal (bluetoothd 5.66's race): connect, services and notifications work, one connected event"
    )
    func unsignalledConnect() async throws {
        try await FaultRig.with { rig in
            let sim = try await rig.startSim()
            defer { sim.stop() }
            let central = try await rig.central()
            let connections = central.connectionEvents()
            try await rig.control("UnsignalledConnect", [Self.hrm])
            let (peripheral, characteristics) = try await FaultRig.connectedHRM(central)
            let id = peripheral.identifier
            let counter = try #require(characteristics[FaultRig.counter])
            var values = peripheral.notifications(for: counter).makeAsyncIterator()
            try await peripheral.setNotifyValue(true, for: counter)
            #expect(isGapless(await FaultRig.take(10, from: &values)))
            #expect(peripheral.state == .connected)
            let events = await FaultRig.collect(connections) { $0.contains { Self.isConnected($0, id) } }
            #expect(events == [.connected(id)], "no spurious disconnection while connecting: \(events)")
        }
    }

    @Test(
        "a reconnect after a link loss whose link comes up without a Connected signal: reconnected, the subscription restored exactly once"
    )
    func unsignalledReconnect() async throws {
        try await FaultRig.with { rig in
            let sim = try await rig.startSim()
            defer { sim.stop() }
            let central = try await rig.central()
            let (peripheral, counterValues, subscribes) = try await rig.subscribedCounter(central)
            var values = counterValues
            let connections = central.connectionEvents()
            let id = peripheral.identifier
            try await rig.control("UnsignalledConnect", [Self.hrm])
            try await rig.control("DropLink", [Self.hrm])
            let events = await FaultRig.collect(connections) { $0.last.map { Self.isConnected($0, id) } ?? false }
            #expect(events == [.disconnected(id, .notConnected), .connected(id)], "\(events)")
            try await Self.expectRestoredOnce(&values, subscribes: subscribes)
        }
    }

    @Test(
        "a link lost while the device is away: attempts fail and are retried with backoff until it is back, then one restore"
    )
    func linkLossRetriesWithBackoff() async throws {
        try await FaultRig.with { rig in
            let sim = try await rig.startSim()
            defer { sim.stop() }
            let central = try await rig.central(
                options: .init(
                    reconnectPolicy: ReconnectPolicy(firstDelay: .milliseconds(50), maximumDelay: .seconds(1))))
            let (peripheral, counterValues, subscribes) = try await rig.subscribedCounter(central)
            var values = counterValues
            let connections = central.connectionEvents()
            let id = peripheral.identifier
            // The device goes quiet (Connect to it fails after connectFailSeconds), then the link drops.
            try await rig.control("Silence", [Self.hrm, .boolean(true)])
            try await rig.control("DropLink", [Self.hrm])
            let lost = await FaultRig.collect(connections) { $0.filter { Self.isFailure($0, id) }.count == 2 }
            #expect(lost.first == .disconnected(id, .notConnected), "\(lost)")
            #expect(lost.filter { Self.isFailure($0, id) }.count == 2, "two failed attempts, each retried: \(lost)")
            #expect(peripheral.state != .connected)
            try await rig.control("Silence", [Self.hrm, .boolean(false)])
            #expect(
                await first(connections) { Self.isConnected($0, id) } != nil, "reconnected once the device was back")
            try await Self.expectRestoredOnce(&values, subscribes: subscribes)
        }
    }

    @Test(
        "blesim killed and started again: the scan ends with bluetoothdGone, the loop scans again, the link and its subscription come back"
    )
    func blesimRestartRestoresEverything() async throws {
        try await FaultRig.with { rig in
            let sim = try await rig.startSim()
            let central = try await rig.central()
            let states = central.stateUpdates()
            let loop = FaultRig.scanLoop(central)
            defer { loop.task.cancel() }
            let peripheral = try await FaultRig.findHRM(central, on: loop.found)
            let counter = try #require(try await FaultRig.connect(peripheral, with: central)[FaultRig.counter])
            var values = peripheral.notifications(for: counter).makeAsyncIterator()
            try await peripheral.setNotifyValue(true, for: counter)
            #expect(isGapless(await FaultRig.take(10, from: &values)))
            let subscribes = try await rig.subscribeCount(of: counter.objectPath)
            let discovering = try await rig.discoveringStarts()
            let connections = central.connectionEvents()
            await sim.kill()
            #expect(await first(states) { $0 == .resetting } == .resetting)
            #expect(await first(loop.events) { $0 == .ended(.bluetoothdGone) } != nil)
            let second = try await rig.startSim()
            defer { second.stop() }
            #expect(await first(states) { $0 == .poweredOn } == .poweredOn)
            #expect(await first(discovering) { true } != nil, "discovery started on the new blesim")
            // The new blesim's device object appears once discovery hears it; then the manager reconnects it.
            #expect(await first(loop.found) { $0.identifier == peripheral.identifier } != nil)
            let id = peripheral.identifier
            #expect(await first(connections) { Self.isConnected($0, id) } != nil, "the wanted link came back")
            let resolved = try await peripheral.discoverServices()
            #expect(!resolved.isEmpty)
            try await Self.expectRestoredOnce(&values, subscribes: subscribes)
        }
    }

    @Test("an agent restart with restoration: the new manager restores its state, reconnects and resubscribes once")
    func agentRestartRestores() async throws {
        try await FaultRig.with { rig in
            let sim = try await rig.startSim()
            defer { sim.stop() }
            let store = try #require(RestorationStore(directory: rig.bus.directory, restoreIdentifier: "faults"))
            // StartNotify sessions belong to a bus name and end when it leaves, as at a process's death
            // (an AcquireNotify socket would stay open in this process).
            let backendOptions = BlueZCentralBackend.Options(acquireNotify: false)
            let dying = try await rig.central(options: .init(restoration: store), backend: backendOptions)
            let (peripheral, characteristics) = try await FaultRig.connectedHRM(dying)
            let counter = try #require(characteristics[FaultRig.counter])
            try await peripheral.setNotifyValue(true, for: counter)
            // The agent dies (its connection leaves the bus), then the link drops while it is away.
            await rig.client.close()
            try await rig.control("DropLink", [Self.hrm])
            let subscribes = try await rig.subscribeCount(of: counter.objectPath)
            let client = try await rig.bus.connect()
            let second = CentralManager(
                backend: try await BlueZCentralBackend(connection: client, options: backendOptions),
                options: .init(restoration: store))
            guard case .restored(let restored) = second.restoredState else {
                Issue.record("no restored state: \(second.restoredState)")
                return
            }
            #expect(restored.desiredConnections == [peripheral.identifier])
            #expect(restored.subscriptions == [counter.reference])
            let connections = second.connectionEvents()
            let id = peripheral.identifier
            #expect(await first(connections) { Self.isConnected($0, id) } != nil, "reconnected by itself")
            let again = try #require(second.retrievePeripherals(withIdentifiers: [id]).first)
            var found: RemoteCharacteristic?
            for service in try await again.discoverServices() {
                found = try await again.discoverCharacteristics([FaultRig.counter], for: service).first ?? found
            }
            let restoredCounter = try #require(found)
            #expect(again.isNotifying(restoredCounter))
            var values = again.notifications(for: restoredCounter).makeAsyncIterator()
            try await Self.expectRestoredOnce(&values, subscribes: subscribes)
            await client.close()
            _ = dying
        }
    }

    static func isFailure(_ event: ConnectionEvent, _ id: PeripheralIdentifier) -> Bool {
        if case .failedToConnect(let failed, _) = event { return failed == id }
        return false
    }

    static func isConnected(_ event: ConnectionEvent, _ id: PeripheralIdentifier) -> Bool {
        if case .connected(let connected) = event { return connected == id }
        return false
    }

    /// After a reconnect: 100 more notifications, each exactly one more than the one before except
    /// at most one jump forward (the counter ran on while the link was down), none repeated; and
    /// BlueZ saw exactly one new subscription (NotifyAcquired or Notifying true).
    static func expectRestoredOnce(
        _ values: inout NotificationStream.AsyncIterator, subscribes: Counter
    ) async throws {
        let after = await FaultRig.take(100, from: &values)
        #expect(after.count == 100)
        let steps = zip(after, after.dropFirst()).map { ($1 - $0) & 0xFFFF }
        #expect(!steps.contains(0), "a notification was doubled: \(after)")
        #expect(steps.filter { $0 != 1 }.count <= 1, "values lost after the resubscribe: \(after)")
        #expect(await subscribes.value(reaching: 1) == 1, "restored exactly once")
    }
}

extension FaultRig {
    /// Waits until blesim holds a write on `path` in flight: a probe write with an unknown type is
    /// answered InProgress while one is (and NotSupported at once otherwise). Each probe is one
    /// round trip to blesim, no timer.
    func waitForWriteInFlight(_ path: String) async throws {
        for _ in 0..<20_000 {
            do {
                _ = try await monitor.call(
                    destination: "org.bluez", path: try ObjectPath(path), interface: BlueZInterface.gattCharacteristic,
                    member: "WriteValue", arguments: [.bytes([0]), BlueZNames.gattOptions(type: "probe")])
                throw Failure("blesim accepted a write of type probe")
            } catch let error as DBusError where error.name.rawValue == "org.bluez.Error.InProgress" {
                return
            } catch is DBusError {
                continue
            }
        }
        throw Failure("the manager's write never reached blesim")
    }

    /// Connects HRM-C with `central`, subscribes to its counter and checks 10 gapless values;
    /// returns the peripheral, the values still to come and BlueZ's subscriptions counted from then on.
    func subscribedCounter(
        _ central: CentralManager
    ) async throws -> (Peripheral, NotificationStream.AsyncIterator, Counter) {
        let (peripheral, characteristics) = try await FaultRig.connectedHRM(central)
        let counter = try #require(characteristics[FaultRig.counter])
        var values = peripheral.notifications(for: counter).makeAsyncIterator()
        try await peripheral.setNotifyValue(true, for: counter)
        #expect(isGapless(await FaultRig.take(10, from: &values)))
        return (peripheral, values, try await subscribeCount(of: counter.objectPath))
    }

    /// Counts, from now on, BlueZ's confirmations that notifications on `path` started.
    func subscribeCount(of path: String) async throws -> Counter {
        let changes = try await deviceChanges()
        let count = Counter()
        Task {
            for await (changedPath, changed) in changes where changedPath == path {
                if changed["NotifyAcquired"]?.boolValue == true || changed["Notifying"]?.boolValue == true {
                    count.increment()
                }
            }
        }
        return count
    }

    /// Sets hci0's Powered.
    func setPowered(_ on: Bool) async throws {
        _ = try await monitor.call(
            destination: "org.bluez", path: try ObjectPath("/org/bluez/hci0"),
            interface: "org.freedesktop.DBus.Properties", member: "Set",
            arguments: [.string(BlueZInterface.adapter), .string("Powered"), .variant(.boolean(on))])
    }

    /// An event each time hci0's Discovering becomes true.
    func discoveringStarts() async throws -> AsyncStream<Void> {
        try await CentralOverBlesimTests.discoveringStarts(monitor)
    }
}

/// A count shared with a watching task, which counts events as it gets to them: a check reads the count once the
/// expected events were counted (``value(reaching:)``), never at a moment the watcher may not have reached yet.
final class Counter: Sendable {
    private let count = Mutex(0)
    private let counts: AsyncStream<Int>
    private let sink: AsyncStream<Int>.Continuation

    init() { (counts, sink) = AsyncStream.makeStream() }

    /// The count now.
    var value: Int { count.withLock { $0 } }

    /// Adds one.
    func increment() {
        sink.yield(
            count.withLock {
                $0 += 1
                return $0
            })
    }

    /// The count once it reached `target`, or after the deadline (the check on it then fails). One caller at a time.
    func value(reaching target: Int) async -> Int {
        if value < target { _ = await first(counts) { $0 >= target } }
        return value
    }
}
