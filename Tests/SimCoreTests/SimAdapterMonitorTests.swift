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

@Suite("Advertisement monitors with RSSI thresholds (bluetoothd 5.66's adv_monitor_filter_rssi)")
struct SimAdapterMonitorRSSITests {
    static let filter = SimMonitor.RSSIFilter(high: -60, low: -80, highTimeout: 2, lowTimeout: 3)

    static func monitor() throws -> SimMonitor {
        SimMonitor(
            owner: ":1.7", path: "/app/m0", patterns: [try .manufacturerData(0x004C, prefix: [0x02, 0x15])],
            rssi: filter)
    }

    static func at(_ seconds: Double) -> SimInstant { SimInstant(nanoseconds: Int64(seconds * 1e9)) }

    static func beacon(rssi: Int16) -> AdvertisingReport { Fixture.report(1, rssi: rssi, manufacturer: [0x02, 0x15]) }

    static let found = AdapterEvent.monitorDeviceFound(owner: ":1.7", monitor: "/app/m0", device: Fixture.address(1))
    static let lost = AdapterEvent.monitorDeviceLost(owner: ":1.7", monitor: "/app/m0", device: Fixture.address(1))

    /// An adapter whose monitor found the beacon at 2 s (heard above the high threshold at 0 s and 2 s).
    static func adapterWithBeaconFound() throws -> SimAdapter {
        var adapter = Fixture.adapter()
        adapter.activateMonitor(try monitor())
        _ = adapter.receive(beacon(rssi: -50), at: at(0))
        #expect(calls(adapter.receive(beacon(rssi: -50), at: at(2))) == [found])
        return adapter
    }

    /// The DeviceFound / DeviceLost calls among `events`.
    static func calls(_ events: [AdapterEvent]) -> [AdapterEvent] {
        events.filter { $0 == found || $0 == lost }
    }

    @Test("found once the RSSI stayed above the high threshold for the high timeout, once; the device exists before")
    func foundAfterHighTimeout() throws {
        var adapter = Fixture.adapter()
        adapter.activateMonitor(try Self.monitor())
        let first = adapter.receive(Self.beacon(rssi: -50), at: Self.at(0))
        #expect(first.addedDevices == [Fixture.address(1)], "a content match creates the device")
        #expect(Self.calls(first).isEmpty)
        #expect(Self.calls(adapter.receive(Self.beacon(rssi: -50), at: Self.at(1.5))).isEmpty)
        #expect(Self.calls(adapter.receive(Self.beacon(rssi: -50), at: Self.at(2.2))) == [Self.found])
        #expect(Self.calls(adapter.receive(Self.beacon(rssi: -50), at: Self.at(3))).isEmpty, "already found")
    }

    @Test("a report at or below the high threshold restarts the high timing")
    func highTimingRestarts() throws {
        var adapter = Fixture.adapter()
        adapter.activateMonitor(try Self.monitor())
        _ = adapter.receive(Self.beacon(rssi: -50), at: Self.at(0))
        _ = adapter.receive(Self.beacon(rssi: -60), at: Self.at(1))
        #expect(Self.calls(adapter.receive(Self.beacon(rssi: -50), at: Self.at(2))).isEmpty)
        #expect(Self.calls(adapter.receive(Self.beacon(rssi: -50), at: Self.at(3))).isEmpty)
        #expect(Self.calls(adapter.receive(Self.beacon(rssi: -50), at: Self.at(4))) == [Self.found])
    }

    @Test("lost once the RSSI stayed below the low threshold for the low timeout")
    func lostBelowLowThreshold() throws {
        var adapter = try Self.adapterWithBeaconFound()
        #expect(Self.calls(adapter.receive(Self.beacon(rssi: -90), at: Self.at(3))).isEmpty)
        #expect(Self.calls(adapter.receive(Self.beacon(rssi: -90), at: Self.at(5))).isEmpty)
        #expect(Self.calls(adapter.receive(Self.beacon(rssi: -90), at: Self.at(6))) == [Self.lost])
        #expect(adapter.devices[Fixture.address(1)] != nil, "the device object stays")
    }

    @Test("a found device unheard for the low timeout is lost by its timer, which is the adapter's next expiry")
    func lostWhenUnheard() throws {
        var adapter = try Self.adapterWithBeaconFound()
        let due = try #require(adapter.nextExpiry)
        #expect(due <= Self.at(5))
        #expect(Self.calls(adapter.expire(at: Self.at(4.9))).isEmpty)
        #expect(Self.calls(adapter.expire(at: Self.at(5))) == [Self.lost])
        #expect(Self.calls(adapter.expire(at: Self.at(9))).isEmpty, "lost once")
    }

    @Test("a report renews the lost timer")
    func reportRenewsLostTimer() throws {
        var adapter = try Self.adapterWithBeaconFound()
        _ = adapter.receive(Self.beacon(rssi: -70), at: Self.at(4))
        #expect(Self.calls(adapter.expire(at: Self.at(5))).isEmpty)
        #expect(Self.calls(adapter.expire(at: Self.at(7))) == [Self.lost])
    }

    @Test("a monitor removed or replaced, or a device removed, forgets its state without DeviceLost")
    func stateGoesWithMonitorAndDevice() throws {
        var adapter = try Self.adapterWithBeaconFound()
        adapter.activateMonitor(try Self.monitor())
        #expect(Self.calls(adapter.expire(at: Self.at(10))).isEmpty, "replaced: no lost timer left")
        #expect(Self.calls(adapter.receive(Self.beacon(rssi: -50), at: Self.at(11))).isEmpty, "timing starts again")
        #expect(Self.calls(adapter.receive(Self.beacon(rssi: -50), at: Self.at(13))) == [Self.found])
        adapter.removeMonitors(owner: ":1.7")
        #expect(Self.calls(adapter.expire(at: Self.at(20))).isEmpty)
    }

    @Test("a device object removed takes what the monitor knew of it: no DeviceLost, and its timing starts again")
    func stateGoesWithDevice() throws {
        var adapter = try Self.adapterWithBeaconFound()
        #expect(try adapter.removeDevice(path: adapter.devicePath(Fixture.address(1))).removedDevices.count == 1)
        #expect(Self.calls(adapter.expire(at: Self.at(10))).isEmpty, "no lost timer left")
        #expect(Self.calls(adapter.receive(Self.beacon(rssi: -50), at: Self.at(11))).isEmpty, "found again only later")
        #expect(Self.calls(adapter.receive(Self.beacon(rssi: -50), at: Self.at(13))) == [Self.found])
    }

    @Test("the RSSI properties as parse_rssi_and_timeout reads them: none, defaults filled in, out of range")
    func parsing() {
        typealias Filter = SimMonitor.RSSIFilter
        #expect(Filter.parsing(high: nil, highTimeout: nil, low: nil, lowTimeout: nil, samplingPeriod: nil) == .none)
        #expect(Filter.parsing(high: 127, highTimeout: 0, low: 127, lowTimeout: 0, samplingPeriod: 256) == .none)
        #expect(
            Filter.parsing(high: -60, highTimeout: nil, low: nil, lowTimeout: nil, samplingPeriod: nil)
                == .filter(Filter(high: -60, low: -127, highTimeout: 10, lowTimeout: 5)))
        #expect(
            Filter.parsing(high: nil, highTimeout: nil, low: -70, lowTimeout: 2, samplingPeriod: 0)
                == .filter(Filter(high: -70, low: -70, highTimeout: 10, lowTimeout: 2)))
        #expect(Filter.parsing(high: -80, highTimeout: 1, low: -60, lowTimeout: 1, samplingPeriod: 0) == .invalid)
        #expect(Filter.parsing(high: 21, highTimeout: 1, low: -60, lowTimeout: 1, samplingPeriod: 0) == .invalid)
        #expect(Filter.parsing(high: -60, highTimeout: 301, low: -70, lowTimeout: 1, samplingPeriod: 0) == .invalid)
        #expect(Filter.parsing(high: -60, highTimeout: 1, low: -70, lowTimeout: 1, samplingPeriod: 300) == .invalid)
    }
}
