import BLE
import BLETesting
import BlueZ
import DBus
import GATT
import Testing

@Suite("GATT through BlueZCentralBackend against a fake org.bluez", .timeLimit(.minutes(1)))
struct CentralGATTOverFakeBlueZTests {
    struct Connected {
        let fake: FakeBlueZ
        let client: DBusConnection
        let central: CentralManager
        let peripheral: Peripheral
        let characteristic: RemoteCharacteristic
    }

    /// Scans, connects and discovers the fake's one characteristic.
    static func connect(
        bus: PrivateBus, refuseAcquire: Bool = false, acquireMissing: Bool = false,
        options: BlueZCentralBackend.Options = .init()
    ) async throws -> Connected {
        let fake = try await FakeBlueZ.start(on: bus, refuseAcquire: refuseAcquire, acquireMissing: acquireMissing)
        let client = try await bus.connect()
        let central = CentralManager(backend: try await BlueZCentralBackend(connection: client, options: options))
        _ = await first(central.stateUpdates()) { $0 == .poweredOn }
        let found = try #require(await first(try central.scanForPeripherals()) { _ in true })
        central.stopScan()
        let peripheral = try #require(central.retrievePeripherals(withIdentifiers: [found.identifier]).first)
        try await central.connect(peripheral)
        let service = try #require(try await peripheral.discoverServices().first)
        let characteristic = try #require(try await peripheral.discoverCharacteristics(for: service).first)
        return Connected(
            fake: fake, client: client, central: central, peripheral: peripheral, characteristic: characteristic)
    }

    @Test("reads and writes reach GattCharacteristic1 with BlueZ's options; descriptors use GattDescriptor1")
    func readWriteOptions() async throws {
        try await PrivateBus.with { bus in
            let c = try await Self.connect(bus: bus, options: .init(acquireWrite: false))
            let calls = c.fake.gatt.calls
            #expect(try await c.peripheral.readValue(for: c.characteristic) == [7])
            #expect(await first(calls) { _ in true } == "org.bluez.GattCharacteristic1.ReadValue")
            try await c.peripheral.writeValue([1, 2], for: c.characteristic, type: .withResponse)
            #expect(
                await first(calls) { _ in true } == "org.bluez.GattCharacteristic1.WriteValue type=request value=[1, 2]"
            )
            try await c.peripheral.writeValue([3], for: c.characteristic, type: .withoutResponse)
            #expect(
                await first(calls) { _ in true } == "org.bluez.GattCharacteristic1.WriteValue type=command value=[3]")
            let descriptor = try #require(try await c.peripheral.discoverDescriptors(for: c.characteristic).first)
            #expect(try await c.peripheral.readValue(for: descriptor) == [1, 0])
            #expect(await first(calls) { _ in true } == "org.bluez.GattDescriptor1.ReadValue")
            await c.client.close()
            await c.fake.stop()
        }
    }

    @Test("notifications come from the AcquireNotify socket; writes without response go through AcquireWrite")
    func acquiredSockets() async throws {
        try await PrivateBus.with { bus in
            let c = try await Self.connect(bus: bus)
            let calls = c.fake.gatt.calls
            let values = c.peripheral.notifications(for: c.characteristic)
            try await c.peripheral.setNotifyValue(true, for: c.characteristic)
            #expect(await first(calls) { _ in true } == "org.bluez.GattCharacteristic1.AcquireNotify")
            c.fake.gatt.notify([0x06, 0x48])
            #expect(await first(values) { _ in true } == [0x06, 0x48])
            try await c.peripheral.writeValue([9, 9], for: c.characteristic, type: .withoutResponse)
            #expect(await first(calls) { _ in true } == "org.bluez.GattCharacteristic1.AcquireWrite")
            #expect(try await c.fake.gatt.readWritten() == [9, 9])
            try await c.peripheral.setNotifyValue(false, for: c.characteristic)
            #expect(try await c.fake.gatt.notifySocketClosedByCentral(), "unsubscribing closes the socket")
            await c.client.close()
            await c.fake.stop()
        }
    }

    @Test("when BlueZ refuses AcquireNotify, StartNotify is used and Value changes arrive as notifications")
    func fallbackToStartNotify() async throws {
        try await PrivateBus.with { bus in
            let c = try await Self.connect(bus: bus, refuseAcquire: true)
            let calls = c.fake.gatt.calls
            let values = c.peripheral.notifications(for: c.characteristic)
            try await c.peripheral.setNotifyValue(true, for: c.characteristic)
            #expect(await first(calls) { _ in true } == "org.bluez.GattCharacteristic1.AcquireNotify")
            #expect(await first(calls) { _ in true } == "org.bluez.GattCharacteristic1.StartNotify")
            try c.fake.gatt.setValue([0x06, 0x50], on: c.fake.connection.objects)
            #expect(await first(values) { _ in true } == [0x06, 0x50])
            try await c.peripheral.writeValue([4], for: c.characteristic, type: .withoutResponse)
            #expect(await first(calls) { _ in true } == "org.bluez.GattCharacteristic1.AcquireWrite")
            #expect(
                await first(calls) { _ in true } == "org.bluez.GattCharacteristic1.WriteValue type=command value=[4]")
            await c.client.close()
            await c.fake.stop()
        }
    }

    @Test(
        "a stand-in without AcquireNotify/AcquireWrite (UnknownMethod): StartNotify and WriteValue are used, not notConnected"
    )
    func unknownAcquireMethodsFallBack() async throws {
        try await PrivateBus.with { bus in
            let c = try await Self.connect(bus: bus, acquireMissing: true)
            let calls = c.fake.gatt.calls
            try await c.peripheral.setNotifyValue(true, for: c.characteristic)
            #expect(await first(calls) { _ in true } == "org.bluez.GattCharacteristic1.StartNotify")
            let values = c.peripheral.notifications(for: c.characteristic)
            try c.fake.gatt.setValue([0x06, 0x51], on: c.fake.connection.objects)
            #expect(await first(values) { _ in true } == [0x06, 0x51])
            try await c.peripheral.writeValue([5], for: c.characteristic, type: .withoutResponse)
            #expect(
                await first(calls) { _ in true } == "org.bluez.GattCharacteristic1.WriteValue type=command value=[5]")
            #expect(c.peripheral.state == .connected)
            await c.client.close()
            await c.fake.stop()
        }
    }
}
