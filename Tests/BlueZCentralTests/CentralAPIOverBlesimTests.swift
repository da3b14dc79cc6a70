import BLE
import BLETesting
import BlueZ
import DBus
import GATT
import Glibc
import IO
import Testing

/// The central API items that the fault tests do not reach, against blesim (see ``FaultRig``):
/// readRSSI, the retrieve calls, a Connect the peer never completes, the choice of adapter and
/// `unsupported` for an adapter that is not there.
@Suite("CentralManager's API over blesim", .serialized, .timeLimit(.minutes(1)))
struct CentralAPIOverBlesimTests {
    static let hrm = DBusValue.string(FaultRig.hrmAddress)

    @Test(
        "readRSSI is Device1.RSSI; retrievePeripherals knows only discovered identifiers; retrieveConnectedPeripherals lists the connected peripheral by its services"
    )
    func rssiAndRetrieve() async throws {
        try await FaultRig.with { rig in
            let sim = try await rig.startSim()
            defer { sim.stop() }
            let central = try await rig.central()
            let scan = try central.scanForPeripherals(withServices: [.heartRate])
            guard let found = await first(scan, where: { $0.name == "HRM-C" }) else {
                Issue.record("HRM-C not found")
                return
            }
            let peripheral = try #require(central.retrievePeripherals(withIdentifiers: [found.identifier]).first)
            // While discovering (BlueZ invalidates RSSI when discovery stops). The fixture has no
            // noise: the RSSI discovery reported is the one BlueZ still shows.
            let bluezRSSI = try await rig.property(FaultRig.devicePath, "org.bluez.Device1", "RSSI")
            #expect(bluezRSSI == .int16(Int16(try #require(found.rssi))))
            #expect(try await peripheral.readRSSI() == found.rssi)
            central.stopScan()

            let stranger = PeripheralIdentifier(
                adapter: "00:00:00:00:00:00", address: "C0:00:00:00:00:99", addressType: .random)
            #expect(
                central.retrievePeripherals(withIdentifiers: [stranger, found.identifier]).map(\.identifier)
                    == [found.identifier])
            #expect(central.retrieveConnectedPeripherals(withServices: []).isEmpty, "nothing connected yet")

            let connections = central.connectionEvents()
            _ = try await FaultRig.connect(peripheral, with: central)
            #expect(
                central.retrieveConnectedPeripherals(withServices: [.heartRate]).map(\.identifier)
                    == [found.identifier])
            #expect(
                central.retrieveConnectedPeripherals(withServices: [BluetoothUUID(uuid16: 0x180F)]).isEmpty,
                "HRM-C has no Battery Service")
            #expect(central.retrieveConnectedPeripherals(withServices: []).map(\.identifier) == [found.identifier])

            try await central.cancelConnection(peripheral)
            let gone = await first(connections) { event in
                if case .disconnected(found.identifier, _) = event { true } else { false }
            }
            #expect(gone != nil)
            #expect(central.retrieveConnectedPeripherals(withServices: []).isEmpty)
        }
    }

    @Test("discoverIncludedServices lists the services a service includes (GattService1.Includes from blesim)")
    func includedServices() async throws {
        // HRM-C with its Heart Rate service including the custom one (Include declarations shift the handles).
        let scenario = FaultRig.scenario.replacing(
            #"{ "uuid": "180D", "characteristics""#, with: #"{ "uuid": "180D", "includes": [1], "characteristics""#)
        #expect(scenario != FaultRig.scenario)
        try await FaultRig.with(scenario: scenario) { rig in
            let sim = try await rig.startSim()
            defer { sim.stop() }
            let central = try await rig.central()
            let (peripheral, _) = try await FaultRig.connectedHRM(central)
            let services = try await peripheral.discoverServices()
            let heartRate = try #require(services.first { $0.uuid == .heartRate })
            let custom = try #require(
                services.first { $0.uuid == BluetoothUUID("12345678-1234-5678-1234-56789abcdef0") })
            #expect(try await peripheral.discoverIncludedServices(for: heartRate).map(\.uuid) == [custom.uuid])
            #expect(try await peripheral.discoverIncludedServices(for: custom).isEmpty)
            try await central.cancelConnection(peripheral)
        }
    }

    @Test(
        "a Connect the peer never completes (a timeout fault) is connectionFailed with BlueZ's Failed le-connection-abort-by-local, and failedToConnect"
    )
    func connectTimeoutFails() async throws {
        try await FaultRig.with { rig in
            let sim = try await rig.startSim()
            defer { sim.stop() }
            // A connect deadline beyond the test's limit: only blesim's answer can end the connect.
            let central = try await rig.central(options: .init(connectTimeout: .seconds(120)))
            let peripheral = try await FaultRig.findHRM(central, on: try central.scanForPeripherals())
            central.stopScan()
            let events = central.connectionEvents()
            try await rig.control("FailNext", [Self.hrm, .string(""), .uint32(1), .string("timeout"), .string("")])
            do throws(BLEError) {
                try await central.connect(peripheral)
                Issue.record("connect succeeded")
            } catch {
                #expect(error.code == .connectionFailed)
                #expect(error.bluezError?.name == .failed)
                #expect(error.bluezError?.message == "le-connection-abort-by-local")
            }
            let failed = await first(events) { event in
                if case .failedToConnect(peripheral.identifier, _) = event { true } else { false }
            }
            #expect(failed != nil)
            #expect(peripheral.state == .disconnected)
            try await central.cancelConnection(peripheral)
        }
    }

    @Test(
        "AcquireNotify refused with InProgress (another client's StartNotify session) falls back to StartNotify: notifications arrive, none lost"
    )
    func acquireNotifyFallsBackToStartNotify() async throws {
        try await FaultRig.with { rig in
            let sim = try await rig.startSim()
            defer { sim.stop() }
            let central = try await rig.central()
            let (peripheral, characteristics) = try await FaultRig.connectedHRM(central)
            let counter = try #require(characteristics[FaultRig.counter])
            // Another client of bluetoothd subscribes first, with StartNotify.
            _ = try await rig.monitor.call(
                destination: "org.bluez", path: try ObjectPath(counter.objectPath),
                interface: "org.bluez.GattCharacteristic1", member: "StartNotify", arguments: [])
            var values = peripheral.notifications(for: counter).makeAsyncIterator()
            try await peripheral.setNotifyValue(true, for: counter)
            #expect(peripheral.isNotifying(counter))
            let received = await FaultRig.take(10, from: &values)
            #expect(received.count == 10 && isGapless(received), "\(received)")
            #expect(
                try await rig.property(counter.objectPath, "org.bluez.GattCharacteristic1", "NotifyAcquired")
                    == .boolean(false), "a StartNotify session, not a socket")
        }
    }

    @Test(
        "the mirror is bounded: a device silenced by a fault is dropped after the stale age while BlueZ still lists it; a device still heard stays"
    )
    func staleDevicesLeaveTheMirror() async throws {
        try await FaultRig.with { rig in
            // Tests/BlesimTests/Fixtures/air.json: Near-A and HRM-C advertise every 50 ms.
            let sim = try await BlesimProcess.start(address: rig.bus.address)
            defer { sim.stop() }
            let central = try await rig.central(options: .init(mirrorLimits: .init(staleDeviceAge: .seconds(1))))
            var scan = try central.scanForPeripherals(options: ScanOptions(allowDuplicates: true))
                .makeAsyncIterator()
            var ids: [String: PeripheralIdentifier] = [:]
            while ids.count < 2, let found = await scan.next() {
                if let name = found.name, ["Near-A", "HRM-C"].contains(name) { ids[name] = found.identifier }
            }
            let hrm = try #require(ids["HRM-C"])
            let near = try #require(ids["Near-A"])
            try await rig.control("Silence", [Self.hrm, .boolean(true)])
            // Near-A's reports (its ManufacturerData with every advertisement, DuplicateData) keep
            // events coming, and the manager prunes as they arrive: poll for the outcome.
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(20)
            while !central.retrievePeripherals(withIdentifiers: [hrm]).isEmpty, clock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(central.retrievePeripherals(withIdentifiers: [hrm]).isEmpty, "HRM-C left the mirror")
            #expect(central.retrievePeripherals(withIdentifiers: [near]).count == 1, "Near-A is still heard")
            #expect(
                try await rig.property(FaultRig.devicePath, "org.bluez.Device1", "Address")
                    == .string(FaultRig.hrmAddress), "BlueZ still lists HRM-C (temporary timeout 30 s)")
            central.stopScan()
        }
    }

    @Test(
        "scan options against blesim: an RSSI threshold and a name pattern each filter their own scan, while an unfiltered scan beside them hears every device"
    )
    func scanOptions() async throws {
        try await FaultRig.with { rig in
            // Tests/BlesimTests/Fixtures/air.json, no noise: Near-A about -53 dBm, HRM-C -69, Far-B -89.
            let sim = try await BlesimProcess.start(address: rig.bus.address)
            defer { sim.stop() }
            let central = try await rig.central()
            let strong = try central.scanForPeripherals(options: ScanOptions(rssiThreshold: -75))
            let named = try central.scanForPeripherals(options: ScanOptions(namePattern: "HRM"))
            var everything = try central.scanForPeripherals().makeAsyncIterator()
            var heard: Set<String> = []
            while !heard.isSuperset(of: ["Near-A", "Far-B", "HRM-C"]), let found = await everything.next() {
                if let name = found.name { heard.insert(name) }
            }
            // Every report the unfiltered scan got was offered to the others at the same time.
            central.stopScan()
            var strongNames: Set<String> = []
            for await found in strong { strongNames.insert(found.name ?? found.identifier.description) }
            var namedNames: Set<String> = []
            for await found in named { namedNames.insert(found.name ?? found.identifier.description) }
            #expect(strongNames.isSuperset(of: ["Near-A", "HRM-C"]), "\(strongNames)")
            #expect(!strongNames.contains("Far-B"), "\(strongNames)")
            #expect(namedNames == ["HRM-C"], "\(namedNames)")
        }
    }

    @Test("a bus whose policy refuses our calls to org.bluez makes the manager unauthorized; operations are refused")
    func unauthorized() async throws {
        try await PrivateBus.with(policy: #"<deny send_destination="org.bluez"/>"#) { bus in
            let sim = try await BlesimProcess.start(address: bus.address)
            defer { sim.stop() }
            let connection = try await bus.connect()
            let central = CentralManager(backend: try await BlueZCentralBackend(connection: connection))
            #expect(await first(central.stateUpdates(), where: { $0 == .unauthorized }) == .unauthorized)
            do throws(BLEError) {
                _ = try central.scanForPeripherals()
                Issue.record("a scan was accepted on a bus that refuses us")
            } catch {
                #expect(error.code == .unauthorized)
            }
            await connection.close()
        }
    }

    static let descriptorScenario = """
        { "adapters": 1, "mtu": 64,
          "devices": [ { "address": "C0:00:00:00:00:0C", "addressType": "random", "intervalMs": 50,
            "advertising": { "name": "HRM-C", "serviceUUIDs": ["180D"] }, "rssi": { "distance": 3 },
            "gatt": { "services": [
              { "uuid": "180D", "characteristics": [ { "uuid": "2A37", "flags": ["notify"], "value": "0000" } ] },
              { "uuid": "12345678-1234-5678-1234-56789abcdef0", "characteristics": [
                { "uuid": "12345678-1234-5678-1234-56789abcdef1", "flags": ["read", "write"],
                  "value": { "utf8": "note" },
                  "descriptors": [ { "uuid": "2901", "value": { "utf8": "Long note" }, "writable": true } ] },
                { "uuid": "12345678-1234-5678-1234-56789abcdef2", "flags": ["read", "write-without-response"],
                  "value": "00" } ] } ] } } ] }
        """

    @Test(
        "against blesim's HRM-C: state connecting while Connect is delayed; descriptors discovered, read and written; a long write with response read back whole; writes without response limited and chunked; a read without the read property refused"
    )
    func peripheralOperations() async throws {
        try await FaultRig.with { rig in
            // HRM-C (MTU 64) with a note, its writable 2901 descriptor, and a notify-only 2A37.
            let path = rig.bus.directory + "/descriptors.json"
            try await BlockingPool.shared.run { () throws in
                guard let file = fopen(path, "w") else { throw FaultRig.Failure("cannot write \(path)") }
                fputs(Self.descriptorScenario, file)
                fclose(file)
            }
            let sim = try await BlesimProcess.start(address: rig.bus.address, scenario: path)
            defer { sim.stop() }
            let central = try await rig.central()
            let peripheral = try await FaultRig.findHRM(central, on: try central.scanForPeripherals())
            central.stopScan()
            #expect(peripheral.serviceDiscoveryState == .idle)
            try await rig.control("SetDelay", [Self.hrm, .double(1)])
            let connecting = Task { try await central.connect(peripheral) }
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(20)
            while peripheral.state != .connecting, clock.now < deadline { await Task.yield() }
            #expect(peripheral.state == .connecting, "while Connect is delayed")
            try await connecting.value
            // Resolved services come after Connected in the manager's event order.
            _ = try await peripheral.discoverServices()
            #expect(peripheral.state == .connected)
            #expect(peripheral.serviceDiscoveryState == .discovered)
            try await rig.control("SetDelay", [Self.hrm, .double(0)])

            var characteristics: [BluetoothUUID: RemoteCharacteristic] = [:]
            for service in try await peripheral.discoverServices() {
                for found in try await peripheral.discoverCharacteristics(for: service) {
                    characteristics[found.uuid] = found
                }
            }
            let note = try #require(characteristics[FaultRig.note])
            let descriptors = try await peripheral.discoverDescriptors(for: note)
            let description = try #require(descriptors.first { $0.uuid == BluetoothUUID(uuid16: 0x2901) })
            #expect(try await peripheral.readValue(for: description) == Array("Long note".utf8))
            try await peripheral.writeValue(Array("Short".utf8), for: description)
            #expect(try await peripheral.readValue(for: description) == Array("Short".utf8))

            // 200 bytes over an MTU of 64: BlueZ writes it long (prepare/execute), the manager asks once.
            let long = (0..<200).map { UInt8($0) }
            try await peripheral.writeValue(long, for: note, type: .withResponse)
            #expect(try await peripheral.readValue(for: note) == long)

            // Without response: at most MTU - 3 (64 - 3) bytes, refused before BlueZ above that;
            // the helper cuts 100 bytes into 61 + 39, and the device ends with the last chunk.
            let command = try #require(characteristics[BluetoothUUID("12345678-1234-5678-1234-56789abcdef2")!])
            #expect(peripheral.maximumWriteValueLength(for: .withoutResponse, characteristic: command) == 61)
            #expect(
                await errorCode { () async throws(BLEError) in
                    try await peripheral.writeValue(
                        [UInt8](repeating: 9, count: 62), for: command, type: .withoutResponse)
                } == .invalidLength)
            let payload = (0..<100).map { UInt8($0) }
            try await peripheral.writeValueInChunks(payload, for: command)
            // Write commands are not answered: read until the last one has arrived (bounded).
            var last: [UInt8] = []
            let readDeadline = clock.now + .seconds(20)
            while last != Array(payload[61...]), clock.now < readDeadline {
                last = try await peripheral.readValue(for: command)
            }
            #expect(last == Array(payload[61...]))

            let measurement = try #require(characteristics[BluetoothUUID(uuid16: 0x2A37)])
            #expect(
                await errorCode { () async throws(BLEError) in try await peripheral.readValue(for: measurement) }
                    == .operationNotSupported)
        }
    }

    @Test(
        "notification-state events: on after setNotifyValue(true), on once more when the manager restores it after a link loss, off after setNotifyValue(false)"
    )
    func notificationStateEvents() async throws {
        try await FaultRig.with { rig in
            let sim = try await rig.startSim()
            defer { sim.stop() }
            let central = try await rig.central()
            let (peripheral, characteristics) = try await FaultRig.connectedHRM(central)
            let counter = try #require(characteristics[FaultRig.counter])
            var changes = peripheral.notificationStateUpdates().makeAsyncIterator()
            try await peripheral.setNotifyValue(true, for: counter)
            #expect(
                await changes.next() == NotificationStateChange(characteristic: counter.reference, isNotifying: true))
            try await rig.control("DropLink", [Self.hrm])
            // The manager connects the wanted peripheral again and restores the subscription: one change.
            #expect(
                await changes.next() == NotificationStateChange(characteristic: counter.reference, isNotifying: true))
            try await peripheral.setNotifyValue(false, for: counter)
            // Had the restore been reported twice, this would be a second `true`.
            #expect(
                await changes.next() == NotificationStateChange(characteristic: counter.reference, isNotifying: false))
        }
    }

    @Test("Options.adapter chooses hci1 (discovery runs there, not on hci0); a missing adapter is unsupported")
    func adapterChoice() async throws {
        try await FaultRig.with { rig in
            let sim = try await BlesimProcess.start(
                address: rig.bus.address, scenario: rig.scenarioPath, options: ["--adapters", "2"])
            defer { sim.stop() }
            let central = try await rig.central(options: .init(adapter: "hci1"))
            let scan = try central.scanForPeripherals()
            guard await first(scan, where: { $0.name == "HRM-C" }) != nil else {
                Issue.record("HRM-C not found from hci1")
                return
            }
            #expect(try await rig.property("/org/bluez/hci1", "org.bluez.Adapter1", "Discovering") == .boolean(true))
            #expect(try await rig.property("/org/bluez/hci0", "org.bluez.Adapter1", "Discovering") == .boolean(false))
            central.stopScan()

            let connection = try await rig.bus.connect()
            let missing = CentralManager(
                backend: try await BlueZCentralBackend(connection: connection),
                options: .init(adapter: "hci5"))
            #expect(await first(missing.stateUpdates(), where: { $0 == .unsupported }) == .unsupported)
            do throws(BLEError) {
                _ = try missing.scanForPeripherals()
                Issue.record("a scan was accepted without the adapter")
            } catch {
                #expect(error.code == .unsupported)
            }
            await connection.close()
        }
    }
}

extension FaultRig {
    /// Properties.Get through the test's own connection.
    func property(_ path: String, _ interface: String, _ name: String) async throws -> DBusValue? {
        let reply = try await monitor.call(
            destination: "org.bluez", path: try ObjectPath(path), interface: "org.freedesktop.DBus.Properties",
            member: "Get", arguments: [.string(interface), .string(name)])
        return try reply.arguments().first?.unwrapped
    }
}
