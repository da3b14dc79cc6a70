import GATT
import SimCore
import Testing

@Suite("The air between adapters and virtual devices")
struct SimWorldTests {
    func world() throws -> SimWorld {
        SimWorld(scenario: try Scenario.parse(try readText("Fixtures/two-adapters.json")))
    }

    func added(_ batches: [SimWorld.Batch], adapter: Int) -> [DeviceAddress: [Property]] {
        var found: [DeviceAddress: [Property]] = [:]
        for batch in batches where batch.adapter == adapter {
            for case .deviceAdded(let address, let properties) in batch.events { found[address] = properties }
        }
        return found
    }

    @Test("nothing is heard, and no deadline runs, while no adapter discovers")
    func idle() throws {
        var world = try world()
        #expect(world.advance(to: .seconds(1)).isEmpty)
        #expect(world.nextDeadline == nil)
    }

    @Test("each adapter hears with its own RSSI, and loses what is below its sensitivity")
    func perObserver() throws {
        var world = try world()
        _ = try world.withAdapter(0) { adapter throws(BlueZError) in try adapter.startDiscovery(owner: ":1.1") }
        _ = try world.withAdapter(1) { adapter throws(BlueZError) in try adapter.startDiscovery(owner: ":1.1") }
        #expect(world.nextDeadline != nil)
        let batches = world.advance(to: .milliseconds(250))
        let left = added(batches, adapter: 0)
        let right = added(batches, adapter: 1)
        let one = DeviceAddress("C0:00:00:00:00:01")!
        let two = DeviceAddress("C0:00:00:00:00:02")!
        #expect(left[one]?.first { $0.name == "RSSI" }?.value == .int16(-59))
        #expect(left[two]?.first { $0.name == "RSSI" }?.value == .int16(-78))
        // hci1 sits at x = 10 with sensitivity -80: device 1 (9 m away, -78 dBm) is heard, device 2 (1 m) too.
        #expect(right[one]?.first { $0.name == "RSSI" }?.value == .int16(-78))
        #expect(right[two]?.first { $0.name == "RSSI" }?.value == .int16(-59))
    }

    @Test("a UUID filter lets only matching devices appear")
    func uuidFilter() throws {
        var world = try world()
        _ = try world.withAdapter(0) { adapter throws(BlueZError) in
            _ = try adapter.setDiscoveryFilter(owner: ":1.1", [("UUIDs", .strings(["180D"]))])
            return try adapter.startDiscovery(owner: ":1.1")
        }
        let left = added(world.advance(to: .seconds(1)), adapter: 0)
        #expect(Set(left.keys) == [DeviceAddress("C0:00:00:00:00:01")!])
    }

    @Test("a client leaving ends discovery; devices then expire after the temporary timeout")
    func leaveAndExpire() throws {
        var world = try world()
        _ = try world.withAdapter(0) { adapter throws(BlueZError) in try adapter.startDiscovery(owner: ":1.7") }
        _ = world.advance(to: .seconds(1))
        #expect(world.adapters[0].devices.count == 2)
        let left = world.clientLeft(owner: ":1.7")
        #expect(left.first?.events.last == .adapterChanged([Property("Discovering", .bool(false))]))
        #expect(world.nextDeadline != nil)
        let removed = world.advance(to: .seconds(7)).flatMap(\.events).filter {
            if case .deviceRemoved = $0 { true } else { false }
        }
        #expect(removed.count == 2)
        #expect(world.adapters[0].devices.isEmpty)
    }

    @Test("the same scenario gives the same air")
    func deterministic() throws {
        var a = try world()
        var b = try world()
        for index in 0..<2 {
            _ = try a.withAdapter(index) { adapter throws(BlueZError) in try adapter.startDiscovery(owner: ":1.1") }
            _ = try b.withAdapter(index) { adapter throws(BlueZError) in try adapter.startDiscovery(owner: ":1.1") }
        }
        for step in 1...50 {
            #expect(a.advance(to: .milliseconds(Int64(step) * 37)) == b.advance(to: .milliseconds(Int64(step) * 37)))
        }
    }
}

@Suite("Object paths and signals")
struct BusSignalTests {
    @Test("events become InterfacesAdded/PropertiesChanged/InterfacesRemoved on the right paths")
    func signals() throws {
        var world = SimWorld(scenario: try Scenario.parse(try readText("Fixtures/two-adapters.json")))
        let started = try world.withAdapter(0) { adapter throws(BlueZError) in try adapter.startDiscovery(owner: ":1.1")
        }
        let batch = SimWorld.Batch(adapter: 0, events: try #require(started))
        #expect(
            batch.signals(in: world) == [
                .propertiesChanged(
                    path: "/org/bluez/hci0", interface: "org.bluez.Adapter1",
                    changed: [Property("Discovering", .bool(true))], invalidated: [])
            ])
        let signals = world.advance(to: .milliseconds(150)).flatMap { $0.signals(in: world) }
        let paths = signals.compactMap { if case .interfacesAdded(let path, _) = $0 { path } else { nil } }
        #expect(paths.sorted() == ["/org/bluez/hci0/dev_C0_00_00_00_00_01", "/org/bluez/hci0/dev_C0_00_00_00_00_02"])
        #expect(world.managedObjects.map(\.path) == ["/org/bluez/hci0"] + paths.sorted() + ["/org/bluez/hci1"])
        #expect(
            world.locate(path: "/org/bluez/hci0/dev_C0_00_00_00_00_02")?.device == DeviceAddress("C0:00:00:00:00:02"))
        #expect(world.locate(path: "/org/bluez/hci1")?.adapter == 1)
        #expect(world.locate(path: "/org/bluez/hci1/dev_C0_00_00_00_00_02") == nil)
    }
}
