import GATT
import SimCore
import Testing

@Suite("Adapters' peripheral role: registered applications and advertisements in the air")
struct LocalPeripheralTests {
    static let hrs = BluetoothUUID(uuid16: 0x180D)

    func world() -> SimWorld {
        SimWorld(scenario: Scenario(adapters: [.standard(index: 0), .standard(index: 1)], devices: []))
    }

    func application(owner: String = ":1.5", path: String = "/app") -> LocalApplication {
        let notify = BlueZGATTFlags.Characteristic(bluezFlags: ["notify"])
        let read = BlueZGATTFlags.Characteristic(bluezFlags: ["read"])
        let spec = GATTServiceSpec(
            uuid: Self.hrs,
            characteristics: [
                GATTCharacteristicSpec(
                    uuid: BluetoothUUID(uuid16: 0x2A37), flags: notify,
                    descriptors: [GATTDescriptorSpec(uuid: BluetoothUUID(uuid16: 0x2901))]),
                GATTCharacteristicSpec(uuid: BluetoothUUID(uuid16: 0x2A38), flags: read),
            ])
        return LocalApplication(
            owner: owner, path: path,
            services: [
                LocalService(
                    path: path + "/s0", spec: spec, characteristicPaths: [path + "/s0/c0", path + "/s0/c1"],
                    descriptorPaths: [[path + "/s0/c0/d0"], []])
            ])
    }

    func advertisement(owner: String = ":1.5", timeout: Double? = nil) -> LocalAdvertisement {
        LocalAdvertisement(
            owner: owner, path: "/adv", advertisement: Advertisement(name: "Periph", serviceUUIDs: [Self.hrs]),
            connectable: true, timeout: timeout)
    }

    func heard(_ batches: [SimWorld.Batch], adapter: Int) -> [DeviceAddress] {
        batches.filter { $0.adapter == adapter }.flatMap(\.events).compactMap { event in
            if case .deviceAdded(let address, _) = event { return address }
            return nil
        }
    }

    @Test(
        "bluetoothd's own GATT (0x0008-0x0011) and Device Information (0x0012-0x0014) come first; the application's handles follow from 0x0015 in bluetoothd's order, with a CCCD after a notifying value, and map to the application's objects"
    )
    func handles() throws {
        var world = world()
        _ = try world.registerApplication(adapter: 0, application(), now: .zero)
        let local = try #require(world.localPeripherals[0])
        let server = try #require(world.servers[local.device])
        #expect(server.services.count == 3)
        let (gatt, deviceInformation) = (server.services[0], server.services[1])
        #expect([gatt.handle, gatt.endHandle, gatt.uuid.uuid16] == [0x0008, 0x0011, 0x1801])
        #expect(gatt.characteristics.map(\.handle) == [0x0009, 0x000c, 0x000e, 0x0010])
        #expect([deviceInformation.handle, deviceInformation.endHandle] == [0x0012, 0x0014])
        #expect(try server.read(0x0014) == [0x02, 0x6b, 0x1d, 0x46, 0x02, 0x42, 0x05])  // PnP ID
        let service = server.services[2]
        #expect(service.handle == 0x0015)
        #expect(service.characteristics.map(\.valueHandle) == [0x0017, 0x001b])
        #expect(
            service.characteristics[0].descriptors.map(\.uuid) == [GATTServer.cccdUUID, BluetoothUUID(uuid16: 0x2901)])
        #expect(local.attributes[0x0017]?.path == "/app/s0/c0")
        #expect(local.attributes[0x0019]?.path == "/app/s0/c0/d0")
        #expect(local.attributes[0x0019]?.isCharacteristic == false)
        #expect(local.attributes[0x0018] == nil)  // the CCCD is bluetoothd's own
        #expect(local.attributes[0x001b]?.path == "/app/s0/c1")
        #expect(local.attributes[0x0014] == nil)  // PnP ID is bluetoothd's, not the application's
    }

    @Test("the same application twice is AlreadyExists; a second advertisement is Failed past the one instance")
    func duplicates() throws {
        var world = world()
        _ = try world.registerApplication(adapter: 0, application(), now: .zero)
        #expect(throws: BlueZError(.alreadyExists, "Already Exists")) {
            _ = try world.registerApplication(adapter: 0, application(), now: .zero)
        }
        _ = try world.registerAdvertisement(adapter: 0, advertisement(), now: .zero)
        #expect(throws: BlueZError(.alreadyExists, "Already Exists")) {
            _ = try world.registerAdvertisement(adapter: 0, advertisement(), now: .zero)
        }
        #expect(throws: BlueZError(.failed, "Maximum advertisements reached")) {
            _ = try world.registerAdvertisement(adapter: 0, advertisement(owner: ":1.9"), now: .zero)
        }
    }

    @Test("an advertising adapter is heard by the other adapter's discovery, never by its own")
    func heardByOthersOnly() throws {
        var world = world()
        _ = try world.registerAdvertisement(adapter: 0, advertisement(), now: .zero)
        for index in 0..<2 {
            _ = try world.withAdapter(index) { adapter throws(BlueZError) in try adapter.startDiscovery(owner: ":1.1") }
        }
        let batches = world.advance(to: .milliseconds(500))
        let address = world.adapters[0].spec.address
        #expect(heard(batches, adapter: 1) == [address])
        #expect(heard(batches, adapter: 0).isEmpty)
    }

    @Test(
        "while a central is connected to an adapter's peripheral role its advertisement is off the air, and back after the disconnection (the kernel's legacy advertising, seen in the VM)"
    )
    func advertisingStopsWhileConnected() throws {
        var world = SimWorld(
            scenario: Scenario(
                adapters: [.standard(index: 0), .standard(index: 1), .standard(index: 2)], devices: []))
        _ = try world.registerApplication(adapter: 0, application(), now: .zero)
        _ = try world.registerAdvertisement(adapter: 0, advertisement(), now: .zero)
        _ = try world.withAdapter(1) { adapter throws(BlueZError) in try adapter.startDiscovery(owner: ":1.1") }
        let address = world.adapters[0].spec.address
        #expect(heard(world.advance(to: .milliseconds(500)), adapter: 1) == [address])
        guard case .connects = try world.beginConnect(adapter: 1, address: address, at: .milliseconds(500)) else {
            Issue.record("no connection")
            return
        }
        _ = world.completeConnect(adapter: 1, address: address)
        // A third adapter that starts listening now does not hear the connected peripheral.
        _ = try world.withAdapter(2) { adapter throws(BlueZError) in try adapter.startDiscovery(owner: ":1.2") }
        #expect(heard(world.advance(to: .seconds(3)), adapter: 2).isEmpty)
        _ = world.beginDisconnect(adapter: 1, address: address)
        _ = world.linkLost(adapter: 1, address: address)
        #expect(heard(world.advance(to: .seconds(4)), adapter: 2) == [address])
    }

    @Test("when the owner leaves, its application and advertisement leave the air (ActiveInstances 0, no Release)")
    func ownerLeaves() throws {
        var world = world()
        _ = try world.registerApplication(adapter: 0, application(), now: .zero)
        _ = try world.registerAdvertisement(adapter: 0, advertisement(), now: .zero)
        let batches = world.peripheralOwnerLeft(":1.5")
        let local = try #require(world.localPeripherals[0])
        #expect(local.advertisement == nil && local.applications.isEmpty)
        #expect(world.servers[local.device] == nil)
        #expect(world.offAir.contains(local.device))
        let events = batches.flatMap(\.events)
        #expect(
            events.contains {
                if case .objectChanged(_, _, let changed, _) = $0 {
                    changed.contains(Property("ActiveInstances", .byte(0)))
                } else {
                    false
                }
            })
        #expect(!events.contains { if case .advertisementReleased = $0 { true } else { false } })
    }

    @Test("an advertisement's Timeout removes it on the simulation clock and Releases it")
    func timeout() throws {
        var world = world()
        _ = try world.registerAdvertisement(adapter: 0, advertisement(timeout: 5), now: .zero)
        #expect(world.nextDeadline == .seconds(5))
        #expect(world.advance(to: .seconds(4)).isEmpty)
        let events = world.advance(to: .seconds(5)).flatMap(\.events)
        #expect(events.contains(.advertisementReleased(owner: ":1.5", path: "/adv")))
        #expect(world.localPeripherals[0]?.advertisement == nil)
    }
}
