import GATT
import SimCore
import Testing

/// bluetoothd's battery plugin on the pure world: Battery1 after services are resolved, updated
/// by notifications, removed with the link.
@Suite("battery plugin (Battery1)")
struct BatteryPluginTests {
    static let scenario = """
        { "devices": [
          { "address": "C0:00:00:00:00:01", "intervalMs": 20, "rssi": { "distance": 1 },
            "advertising": { "flags": 6 },
            "gatt": { "services": [ { "uuid": "180F", "characteristics": [
              { "uuid": "2A19", "flags": ["read", "notify"], "value": { "int": 90, "format": "uint8" },
                "behaviour": { "counter": { "start": 90, "step": -1, "format": "uint8" }, "everyMs": 100 } } ] } ] } },
          { "address": "C0:00:00:00:00:02", "intervalMs": 20, "rssi": { "distance": 1 },
            "advertising": { "flags": 6 },
            "gatt": { "services": [ { "uuid": "180F", "characteristics": [
              { "uuid": "2A19", "flags": ["notify"], "value": "32" } ] } ] } } ] }
        """
    static let battery = DeviceAddress(validBytes: (0xC0, 0, 0, 0, 0, 1))
    static let unreadable = DeviceAddress(validBytes: (0xC0, 0, 0, 0, 0, 2))
    static let path = "/org/bluez/hci0/dev_C0_00_00_00_00_01"

    static func connected(_ address: DeviceAddress) throws -> (SimWorld, [AdapterEvent]) {
        var world = SimWorld(scenario: try Scenario.parse(scenario))
        _ = try world.withAdapter(0) { adapter throws(BlueZError) in try adapter.startDiscovery(owner: ":1.1") }
        _ = world.advance(to: SimInstant.zero.advanced(bySeconds: 0.1))
        _ = try world.beginConnect(adapter: 0, address: address, at: SimInstant.zero.advanced(bySeconds: 0.1))
        _ = world.completeConnect(adapter: 0, address: address)
        let events = world.resolveServices(adapter: 0, address: address).flatMap(\.events)
        return (world, events)
    }

    @Test(
        "after ServicesResolved, Battery1 shows the level read; notifications update it; the link going down removes it"
    )
    func lifecycle() throws {
        // Connected at 0.1 s: the counter (90, one less every 100 ms) stands at 89.
        var (world, resolved) = try Self.connected(Self.battery)
        let added = resolved.firstIndex {
            $0
                == .objectAdded(
                    path: Self.path, interface: "org.bluez.Battery1", properties: [Property("Percentage", .byte(89))])
        }
        let servicesResolved = resolved.firstIndex {
            if case .deviceChanged(_, let changed, _) = $0 {
                changed.contains(Property("ServicesResolved", .bool(true)))
            } else {
                false
            }
        }
        #expect(added != nil && servicesResolved != nil && added! > servicesResolved!, "\(resolved)")
        let later = world.advance(to: SimInstant.zero.advanced(bySeconds: 0.35)).flatMap(\.events)
        #expect(
            later.contains(
                .objectChanged(
                    path: Self.path, interface: "org.bluez.Battery1", changed: [Property("Percentage", .byte(88))],
                    invalidated: [])), "\(later)")
        let lost = world.linkLost(adapter: 0, address: Self.battery).flatMap(\.events)
        #expect(lost.first == .objectRemoved(path: Self.path, interfaces: ["org.bluez.Battery1"]))
        resolved = []
    }

    @Test("a Battery Level that cannot be read gives no Battery1")
    func unreadable() throws {
        let (_, resolved) = try Self.connected(Self.unreadable)
        #expect(!resolved.contains { if case .objectAdded(_, "org.bluez.Battery1", _) = $0 { true } else { false } })
    }
}
