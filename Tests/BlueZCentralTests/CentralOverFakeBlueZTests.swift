import BLE
import BLETesting
import BlueZ
import DBus
import GATT
import Testing

@Suite("CentralManager over BlueZCentralBackend on a private bus with a fake org.bluez", .timeLimit(.minutes(1)))
struct CentralOverFakeBlueZTests {
    @Test("the manager becomes poweredOn and a scan reports the device with its advertisement data")
    func poweredOnAndScan() async throws {
        try await PrivateBus.with { bus in
            let fake = try await FakeBlueZ.start(on: bus)
            let client = try await bus.connect()
            let central = CentralManager(backend: try await BlueZCentralBackend(connection: client))
            #expect(await first(central.stateUpdates()) { $0 == .poweredOn } == .poweredOn)
            let found = await first(try central.scanForPeripherals(withServices: [.heartRate])) { _ in true }
            #expect(found?.name == "HRM-1")
            #expect(found?.rssi == -52)
            #expect(found?.advertisement.serviceUUIDs == [.heartRate])
            #expect(found?.advertisement.manufacturerData[0xFFFF] == [1, 2, 3])
            await client.close()
            await fake.stop()
        }
    }

    @Test(
        "power off gives poweredOff and ends the scan; power on gives poweredOn and the scan loop starts discovery again"
    )
    func powerCycleResumesScan() async throws {
        try await PrivateBus.with { bus in
            let fake = try await FakeBlueZ.start(on: bus)
            let client = try await bus.connect()
            let central = CentralManager(backend: try await BlueZCentralBackend(connection: client))
            let calls = fake.calls
            #expect(await first(central.stateUpdates()) { $0 == .poweredOn } == .poweredOn)
            let loop = FaultRig.scanLoop(central)
            defer { loop.task.cancel() }
            #expect(await first(calls) { $0 == "StartDiscovery" } != nil)
            try fake.setPowered(false)
            #expect(await first(central.stateUpdates()) { $0 == .poweredOff } == .poweredOff)
            #expect(await first(loop.events) { $0 == .ended(.poweredOff) } != nil)
            try fake.setPowered(true)
            #expect(await first(central.stateUpdates()) { $0 == .poweredOn } == .poweredOn)
            #expect(await first(calls) { $0 == "StartDiscovery" } != nil)
            await client.close()
            await fake.stop()
        }
    }

    @Test(
        "bluetoothd leaving gives resetting and ends the scan; a new one gives poweredOn and the scan loop scans on it")
    func restartResumesScan() async throws {
        try await PrivateBus.with { bus in
            let fake = try await FakeBlueZ.start(on: bus)
            let client = try await bus.connect()
            let central = CentralManager(backend: try await BlueZCentralBackend(connection: client))
            #expect(await first(central.stateUpdates()) { $0 == .poweredOn } == .poweredOn)
            let scan = try central.scanForPeripherals()
            #expect(await first(fake.calls) { $0 == "StartDiscovery" } != nil)
            let loop = FaultRig.scanLoop(central)
            defer { loop.task.cancel() }
            let states = central.stateUpdates()
            await fake.stop()
            #expect(await first(states) { $0 == .resetting } == .resetting)
            for await _ in scan {}
            #expect(scan.end == .bluetoothdGone)
            let second = try await FakeBlueZ.start(on: bus)
            #expect(await first(states) { $0 == .poweredOn } == .poweredOn)
            #expect(await first(second.calls) { $0 == "StartDiscovery" } != nil)
            let found = await first(loop.found) { _ in true }
            #expect(found?.name == "HRM-1")
            await client.close()
            await second.stop()
        }
    }

    @Test("a bus that answers AccessDenied makes the manager unauthorized")
    func accessDeniedIsUnauthorized() async throws {
        try await PrivateBus.with { bus in
            let fake = try await FakeBlueZ.start(on: bus, refuseEveryone: true)
            let client = try await bus.connect()
            let central = CentralManager(backend: try await BlueZCentralBackend(connection: client))
            #expect(await first(central.stateUpdates()) { $0 == .unauthorized } == .unauthorized)
            await client.close()
            await fake.stop()
        }
    }
}
