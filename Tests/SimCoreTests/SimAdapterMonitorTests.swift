import GATT
import SimCore
import Testing

@Suite("Advertisement monitors on a simulated adapter")
struct SimAdapterMonitorTests {
    static func monitor() throws -> SimMonitor {
        SimMonitor(owner: ":1.7", path: "/app/m0", patterns: [try .manufacturerData(0x004C, prefix: [0x02, 0x15])])
    }

    @Test("a matching report creates the device without discovery, followed by the monitor's DeviceFound")
    func matchingReportsUpdateDevicesWithoutDiscovery() throws {
        var adapter = Fixture.adapter()
        let beacon = Fixture.report(1, manufacturer: [0x02, 0x15, 0xAA])
        #expect(adapter.receive(beacon, at: SimInstant(nanoseconds: 0)).isEmpty, "neither discovering nor monitoring")
        adapter.activateMonitor(try Self.monitor())
        #expect(adapter.isListening && !adapter.discovering)
        let events = adapter.receive(beacon, at: SimInstant(nanoseconds: 1))
        #expect(events.addedDevices == [Fixture.address(1)])
        #expect(events.last == .monitorDeviceFound(owner: ":1.7", monitor: "/app/m0", device: Fixture.address(1)))
        let phone = Fixture.report(2, manufacturer: [0x10, 0x05])
        #expect(adapter.receive(phone, at: SimInstant(nanoseconds: 2)).isEmpty, "no pattern matches")
        #expect(adapter.removeMonitors(owner: ":1.7", under: "/app") == [try Self.monitor()])
        #expect(!adapter.isListening)
    }

    @Test("a client leaving the bus takes its monitors")
    func clientLeavingRemovesItsMonitors() throws {
        var adapter = Fixture.adapter()
        adapter.activateMonitor(try Self.monitor())
        _ = adapter.clientLeft(owner: ":1.7")
        #expect(adapter.monitors.isEmpty)
    }
}
