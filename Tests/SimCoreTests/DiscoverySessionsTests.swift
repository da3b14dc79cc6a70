import GATT
import SimCore
import Testing

@Suite("Discovery sessions owned by bus names")
struct DiscoverySessionsTests {
    @Test("a second StartDiscovery from the same client is InProgress; another client joins")
    func startTwice() throws {
        var sessions = DiscoverySessions()
        let r1 = try sessions.start(owner: ":1.1")
        #expect(r1)
        #expect(throws: BluetoothdError.inProgress) { try sessions.start(owner: ":1.1") }
        let r2 = try sessions.start(owner: ":1.2")
        #expect(r2 == false)
        #expect(sessions.owners == [":1.1", ":1.2"])
    }

    @Test("StopDiscovery from a client that did not start is Failed \"No discovery started\"")
    func stopStranger() throws {
        var sessions = DiscoverySessions()
        _ = try sessions.start(owner: ":1.1")
        #expect(throws: BluetoothdError.failed("No discovery started")) { try sessions.stop(owner: ":1.9") }
        let r3 = try sessions.stop(owner: ":1.1")
        #expect(r3)
        #expect(!sessions.isActive)
    }

    @Test("discovery stops only when the last session ends")
    func shared() throws {
        var sessions = DiscoverySessions()
        _ = try sessions.start(owner: ":1.1")
        _ = try sessions.start(owner: ":1.2")
        let r4 = try sessions.stop(owner: ":1.1")
        #expect(r4 == false)
        let r5 = sessions.remove(owner: ":1.2")
        #expect(r5)
    }

    @Test("a filter set before StartDiscovery applies, and survives StopDiscovery")
    func presetFilter() throws {
        var sessions = DiscoverySessions()
        var filter = DiscoveryFilter(transport: .dual)
        filter.uuids = [Fixture.hrs]
        sessions.setFilter(filter, owner: ":1.1")
        #expect(!sessions.isActive)
        _ = try sessions.start(owner: ":1.1")
        #expect(sessions.scanFilter?.uuids == [Fixture.hrs])
        _ = try sessions.stop(owner: ":1.1")
        _ = try sessions.start(owner: ":1.1")
        #expect(sessions.isFiltered)
        sessions.setFilter(nil, owner: ":1.1")
        #expect(!sessions.isFiltered)
    }

    @Test("a client leaving the bus loses its pre-set filter too")
    func leaveDropsFilter() throws {
        var sessions = DiscoverySessions()
        sessions.setFilter(DiscoveryFilter(transport: .le), owner: ":1.1")
        let r6 = sessions.remove(owner: ":1.1")
        #expect(r6 == false)
        #expect(sessions.owners.isEmpty)
    }

    @Test("unfiltered discovery reports only discoverable devices; filtered reports any")
    func discoverableFlags() throws {
        var sessions = DiscoverySessions()
        _ = try sessions.start(owner: ":1.1")
        #expect(sessions.reports(Fixture.report(1, flags: 0x06)))
        #expect(!sessions.reports(Fixture.report(2, flags: 0x04)))
        #expect(!sessions.reports(Fixture.report(3, flags: nil)))
        sessions.setFilter(DiscoveryFilter(transport: .dual), owner: ":1.1")
        #expect(sessions.reports(Fixture.report(2, flags: 0x04)))
    }

    @Test("Pattern matches a prefix of the address or the name, whatever the flags")
    func pattern() throws {
        var sessions = DiscoverySessions()
        var filter = DiscoveryFilter(transport: .dual)
        filter.pattern = "Term"
        sessions.setFilter(filter, owner: ":1.1")
        _ = try sessions.start(owner: ":1.1")
        #expect(sessions.reports(Fixture.report(1, name: "Terminal 1", flags: nil)))
        #expect(!sessions.reports(Fixture.report(2, name: "Sensor")))
        filter.pattern = "C0:11:22"
        sessions.setFilter(filter, owner: ":1.1")
        #expect(sessions.reports(Fixture.report(2, name: "Sensor")))
    }

    @Test("UUID filter: a device is reported when it advertises a wanted UUID")
    func uuidMatch() throws {
        var sessions = DiscoverySessions()
        var filter = DiscoveryFilter(transport: .dual)
        filter.uuids = [Fixture.hrs]
        sessions.setFilter(filter, owner: ":1.1")
        _ = try sessions.start(owner: ":1.1")
        #expect(sessions.reports(Fixture.report(1, uuids: [Fixture.battery, Fixture.hrs])))
        #expect(!sessions.reports(Fixture.report(2, uuids: [Fixture.battery])))
    }

    @Test("RSSI thresholds: bluetoothd 5.66 applies the lowest of all clients; documented rule per client")
    func proximity() throws {
        for rule in [ProximityRule.bluez566, .documented] {
            var sessions = DiscoverySessions(proximityRule: rule)
            var near = DiscoveryFilter(transport: .dual)
            near.uuids = [Fixture.hrs]
            near.rssi = -50
            var far = DiscoveryFilter(transport: .dual)
            far.uuids = [Fixture.battery]
            far.rssi = -90
            sessions.setFilter(near, owner: ":1.1")
            sessions.setFilter(far, owner: ":1.2")
            _ = try sessions.start(owner: ":1.1")
            _ = try sessions.start(owner: ":1.2")
            #expect(!sessions.reports(Fixture.report(1, rssi: -95, uuids: [Fixture.hrs])))
            #expect(sessions.reports(Fixture.report(1, rssi: -70, uuids: [Fixture.hrs])) == (rule == .bluez566))
        }
    }

    @Test("Pathloss: ignored by bluetoothd 5.66, applied with TxPower by the documented rule")
    func pathloss() throws {
        for rule in [ProximityRule.bluez566, .documented] {
            var sessions = DiscoverySessions(proximityRule: rule)
            var filter = DiscoveryFilter(transport: .dual)
            filter.pathloss = 60
            sessions.setFilter(filter, owner: ":1.1")
            _ = try sessions.start(owner: ":1.1")
            #expect(sessions.reports(Fixture.report(1, rssi: -50, txPower: 4)))
            #expect(sessions.reports(Fixture.report(1, rssi: -80, txPower: 4)) == (rule == .bluez566))
        }
    }
}
