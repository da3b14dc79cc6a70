import BLE
import BLETesting
import BlueZ
import DBus
import GATT
import Testing

/// CentralManager over BlueZCentralBackend against blesim (the built binary)
/// on a private bus, with Tests/BlesimTests/Fixtures/air.json.
@Suite("CentralManager over BlueZCentralBackend against blesim", .serialized, .timeLimit(.minutes(1)))
struct CentralOverBlesimTests {
    static let near = BluetoothUUID("6e400001-b5a3-f393-e0a9-e50e24dcca9e")!

    /// PropertiesChanged signals saying hci0's `Discovering` became true.
    static func discoveringStarts(_ monitor: DBusConnection) async throws -> AsyncStream<Void> {
        let signals = try await monitor.signals(
            .propertiesChanged(sender: "org.bluez", pathNamespace: try ObjectPath("/org/bluez/hci0")),
            buffering: .unbounded)
        return AsyncStream { continuation in
            let task = Task {
                for await signal in signals {
                    guard let arguments = try? signal.arguments(), arguments.count == 3,
                        arguments[1]["Discovering"]?.boolValue == true
                    else { continue }
                    continuation.yield(())
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    @Test("poweredOn, and a scan finds the scenario's devices with their advertisement data")
    func scanFindsScenarioDevices() async throws {
        try await PrivateBus.with { bus in
            let sim = try await BlesimProcess.start(address: bus.address)
            defer { sim.stop() }
            let client = try await bus.connect()
            let central = CentralManager(backend: try await BlueZCentralBackend(connection: client))
            #expect(await first(central.stateUpdates()) { $0 == .poweredOn } == .poweredOn)
            let near = await first(try central.scanForPeripherals()) { $0.name == "Near-A" }
            #expect(near?.advertisement.serviceUUIDs == [Self.near])
            #expect(near?.advertisement.manufacturerData[0x02E5] == [1, 1])
            #expect(near?.advertisement.txPower == 4)
            #expect(near?.rssi != nil)
            let hrm = await first(try central.scanForPeripherals()) { $0.advertisement.serviceData[.battery] != nil }
            #expect(hrm?.advertisement.serviceData[.battery] == [0x64])
            await client.close()
        }
    }

    @Test(
        "power off gives poweredOff; power on gives poweredOn; the scan ended with poweredOff and the scan loop starts discovery again"
    )
    func powerCycleResumesScanning() async throws {
        try await PrivateBus.with { bus in
            let sim = try await BlesimProcess.start(address: bus.address)
            defer { sim.stop() }
            let client = try await bus.connect()
            let monitor = try await bus.connect()
            let central = CentralManager(backend: try await BlueZCentralBackend(connection: client))
            #expect(await first(central.stateUpdates()) { $0 == .poweredOn } == .poweredOn)
            let starts = try await Self.discoveringStarts(monitor)
            let scan = try central.scanForPeripherals(options: ScanOptions(allowDuplicates: true))
            #expect(await first(starts) { true } != nil)
            #expect(await first(scan) { _ in true } != nil)
            let loop = FaultRig.scanLoop(central)
            defer { loop.task.cancel() }
            let setPowered = { (on: Bool) in
                _ = try await monitor.call(
                    destination: "org.bluez", path: try ObjectPath("/org/bluez/hci0"),
                    interface: "org.freedesktop.DBus.Properties", member: "Set",
                    arguments: [.string(BlueZInterface.adapter), .string("Powered"), .variant(.boolean(on))])
            }
            try await setPowered(false)
            #expect(await first(central.stateUpdates()) { $0 == .poweredOff } == .poweredOff)
            for await _ in scan {}
            #expect(scan.end == .poweredOff, "the scan says why it ended")
            try await setPowered(true)
            #expect(await first(central.stateUpdates()) { $0 == .poweredOn } == .poweredOn)
            #expect(await first(starts) { true } != nil, "discovery started again by the scan loop after power on")
            #expect(central.isScanning)
            await client.close()
            await monitor.close()
        }
    }

    @Test("blesim killed gives resetting and ends the scan; a new blesim gives poweredOn and the scan loop scans on it")
    func restartResumesScanning() async throws {
        try await PrivateBus.with { bus in
            let sim = try await BlesimProcess.start(address: bus.address)
            let client = try await bus.connect()
            let monitor = try await bus.connect()
            let central = CentralManager(backend: try await BlueZCentralBackend(connection: client))
            #expect(await first(central.stateUpdates()) { $0 == .poweredOn } == .poweredOn)
            let starts = try await Self.discoveringStarts(monitor)
            let scan = try central.scanForPeripherals(options: ScanOptions(allowDuplicates: true))
            #expect(await first(starts) { true } != nil)
            let loop = FaultRig.scanLoop(central)
            defer { loop.task.cancel() }
            let states = central.stateUpdates()
            await sim.kill()
            #expect(await first(states) { $0 == .resetting } == .resetting)
            for await _ in scan {}
            #expect(scan.end == .bluetoothdGone, "the scan says why it ended")
            let second = try await BlesimProcess.start(address: bus.address)
            defer { second.stop() }
            #expect(await first(states) { $0 == .poweredOn } == .poweredOn)
            #expect(await first(starts) { true } != nil, "discovery started on the new blesim")
            #expect(await first(loop.found) { $0.name == "Near-A" } != nil)
            await client.close()
            await monitor.close()
        }
    }
}
