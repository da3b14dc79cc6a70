import JSON
import RoleKit
import Testing

@testable import Fleet

/// The relayed devices' feed: configs before states, states coalesced and
/// published only when they change, availability, bounds, reconnection.
@Suite("the fleet's relayed devices")
struct DeviceFeedTests {
    static let sensor = FleetDevice(id: "a4c138000001", name: "ATC_1", model: "BTHome v2 sensor")

    static func temperature(_ value: Double, time: Double = 1) -> FleetDeviceReading {
        FleetDeviceReading(
            id: "temperature", name: "Temperature", value: .number(value), time: time, deviceClass: "temperature",
            stateClass: "measurement", unit: "°C")
    }

    static let door = FleetDeviceReading(
        id: "door", name: "Door", value: .flag(true), time: 1, deviceClass: "door")
    static let press = FleetDeviceReading(
        id: "button", name: "Button", value: .event(type: "press"), time: 1, deviceClass: "button",
        eventTypes: ["press", "long_press"])

    static func drain(_ feed: inout DeviceFeed) -> [DeviceFeed.Item] {
        var items: [DeviceFeed.Item] = []
        while let item = feed.pop() { items.append(item) }
        return items
    }

    @Test("a new device: each reading's config, then online, then the values; nothing more until a value changes")
    func firstSight() {
        var feed = DeviceFeed(announces: true)
        feed.update(Self.sensor, [Self.temperature(21.5), Self.door])
        #expect(
            Self.drain(&feed) == [
                .announce(Self.sensor, Self.temperature(21.5)), .announce(Self.sensor, Self.door),
                .availability(device: "a4c138000001", online: true),
                .reading(device: "a4c138000001", Self.temperature(21.5)),
                .reading(device: "a4c138000001", Self.door),
            ])
        // The same states again (a plugin may give every reading each time): the broker keeps them already.
        feed.update(Self.sensor, [Self.temperature(21.5, time: 2), Self.door])
        #expect(Self.drain(&feed) == [])
        feed.update(Self.sensor, [Self.temperature(22, time: 3), Self.door])
        #expect(Self.drain(&feed) == [.reading(device: "a4c138000001", Self.temperature(22, time: 3))])
        // Events are not states: each one is published.
        feed.update(Self.sensor, [Self.press])
        feed.update(Self.sensor, [])
        #expect(
            Self.drain(&feed) == [
                .announce(Self.sensor, Self.press), .reading(device: "a4c138000001", Self.press),
            ])
        feed.update(Self.sensor, [Self.press])
        #expect(Self.drain(&feed) == [.reading(device: "a4c138000001", Self.press)])
    }

    @Test("without Home Assistant no configs; a renamed device announces its readings again")
    func announcements() {
        var quiet = DeviceFeed(announces: false)
        quiet.update(Self.sensor, [Self.temperature(20)])
        #expect(
            Self.drain(&quiet) == [
                .availability(device: "a4c138000001", online: true),
                .reading(device: "a4c138000001", Self.temperature(20)),
            ])
        var feed = DeviceFeed(announces: true)
        feed.update(Self.sensor, [Self.temperature(20)])
        _ = Self.drain(&feed)
        var renamed = Self.sensor
        renamed.softwareVersion = "1.2"
        feed.update(renamed, [Self.temperature(20)])
        #expect(Self.drain(&feed) == [.announce(renamed, Self.temperature(20))])
    }

    @Test("while the broker is slow the newest value waits, one per reading, and the replaced ones are counted")
    func coalesces() {
        var feed = DeviceFeed(announces: false)
        for step in 0..<100 { feed.update(Self.sensor, [Self.temperature(Double(step))]) }
        #expect(feed.merged == 99)
        #expect(feed.waiting == 1)
        #expect(
            Self.drain(&feed) == [
                .availability(device: "a4c138000001", online: true),
                .reading(device: "a4c138000001", Self.temperature(99)),
            ])
    }

    @Test("a departed device: its waiting value, then offline, then it is forgotten; it may come back")
    func departs() {
        var feed = DeviceFeed(announces: true)
        feed.update(Self.sensor, [Self.temperature(20)])
        _ = Self.drain(&feed)
        feed.update(Self.sensor, [Self.temperature(21)])
        feed.unavailable("a4c138000001")
        feed.unavailable("nobody")
        #expect(
            Self.drain(&feed) == [
                .reading(device: "a4c138000001", Self.temperature(21)),
                .availability(device: "a4c138000001", online: false),
            ])
        #expect(feed.count == 0 && feed.departed == 1)
        feed.update(Self.sensor, [Self.temperature(21)])
        #expect(Self.drain(&feed).count == 3, "config, online and value again")
    }

    @Test("bounded: at most maxDevices devices and maxReadingsPerDevice readings each, the rest counted")
    func bounds() {
        var feed = DeviceFeed(announces: false)
        for index in 0..<(DeviceFeed.maxDevices + 10) {
            feed.update(FleetDevice(id: "d\(index)", name: "d"), [Self.temperature(1)])
        }
        #expect(feed.count == DeviceFeed.maxDevices)
        #expect(feed.devicesDropped == 10)
        let many = (0..<(DeviceFeed.maxReadingsPerDevice + 5)).map { index in
            FleetDeviceReading(id: "r\(index)", name: "r", value: .number(1), time: 1)
        }
        feed.update(FleetDevice(id: "d0", name: "d"), many)
        #expect(feed.readingsDropped == 6, "the device had one reading already")
        // Ids that are not topic levels (wildcards, slashes, the reserved availability) are refused.
        feed.update(FleetDevice(id: "a/b", name: "x"), [Self.temperature(1)])
        feed.update(
            FleetDevice(id: "d1", name: "d"),
            [
                FleetDeviceReading(id: "#", name: "x", value: .number(1), time: 1),
                FleetDeviceReading(id: "availability", name: "x", value: .number(1), time: 1),
            ])
        #expect(feed.devicesDropped == 11 && feed.readingsDropped == 8)
        #expect(feed.waiting == DeviceFeed.maxDevices)
    }

    @Test("a new connection publishes every device's configs, availability and latest states again, not its events")
    func reconnection() {
        var feed = DeviceFeed(announces: true)
        feed.update(Self.sensor, [Self.temperature(20), Self.press])
        _ = Self.drain(&feed)
        feed.reconnected()
        #expect(
            Self.drain(&feed) == [
                .announce(Self.sensor, Self.press), .announce(Self.sensor, Self.temperature(20)),
                .availability(device: "a4c138000001", online: true),
                .reading(device: "a4c138000001", Self.temperature(20)),
            ])
        let carried = feed.carried(announces: false)
        var next = carried
        next.reconnected()
        #expect(Self.drain(&next).count == 2, "availability and the state, without configs")
    }
}
