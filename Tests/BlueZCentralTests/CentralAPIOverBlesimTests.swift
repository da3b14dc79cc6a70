import BLE
import BlueZ
import DBus
import GATT
import TestSupport
import Testing

/// Issue 4's central API items that the fault tests do not reach, against blesim (see ``FaultRig``):
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
            defer { sim.kill() }
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

    @Test(
        "a Connect the peer never completes (a timeout fault) is connectionFailed with BlueZ's Failed le-connection-abort-by-local, and failedToConnect"
    )
    func connectTimeoutFails() async throws {
        try await FaultRig.with { rig in
            let sim = try await rig.startSim()
            defer { sim.kill() }
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

    @Test("Options.adapter chooses hci1 (discovery runs there, not on hci0); a missing adapter is unsupported")
    func adapterChoice() async throws {
        try await FaultRig.with { rig in
            let sim = try await BlesimProcess.start(
                address: rig.bus.address, scenario: rig.scenarioPath, options: ["--adapters", "2"])
            defer { sim.kill() }
            let central = try await rig.central(options: .init(adapter: "/org/bluez/hci1"))
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
                options: .init(adapter: "/org/bluez/hci5"))
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
