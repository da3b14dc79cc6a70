import GATT
import SimCore
import Testing

@Suite("Merging several clients' filters (merge_discovery_filters)")
struct ScanFilterMergeTests {
    func filter(
        uuids: [BluetoothUUID] = [], rssi: Int16? = nil, pathloss: UInt16? = nil, transport: ScanTypes = .dual
    )
        -> DiscoveryFilter
    {
        var filter = DiscoveryFilter(transport: transport)
        filter.uuids = uuids
        filter.rssi = rssi
        filter.pathloss = pathloss
        return filter
    }

    @Test("only unfiltered clients: a regular discovery, no scan filter")
    func regular() {
        #expect(ScanFilter.merge([nil, nil], adapterTransport: .dual) == nil)
    }

    @Test("UUIDs are the sorted union; RSSI the lowest; transports the union")
    func union() {
        let merged = ScanFilter.merge(
            [
                filter(uuids: [Fixture.hrs], rssi: -60, transport: .le),
                filter(uuids: [Fixture.battery], rssi: -80, transport: .bredr),
            ],
            adapterTransport: .dual)
        #expect(merged == ScanFilter(transport: .dual, rssi: -80, uuids: [Fixture.hrs, Fixture.battery].sorted()))
    }

    @Test("a client without UUIDs widens the scan to every device")
    func emptyUUIDsWin() {
        let merged = ScanFilter.merge([filter(uuids: [Fixture.hrs]), filter(rssi: -50)], adapterTransport: .dual)
        #expect(merged?.uuids == [])
    }

    @Test("a client without an RSSI threshold, or with Pathloss, removes the threshold")
    func noThreshold() {
        #expect(
            ScanFilter.merge([filter(rssi: -60), filter(uuids: [Fixture.hrs])], adapterTransport: .dual)?.rssi == nil)
        #expect(ScanFilter.merge([filter(rssi: -60), filter(pathloss: 30)], adapterTransport: .dual)?.rssi == nil)
    }

    @Test("an unfiltered client beside a filtered one opens the scan to everything, still filtered")
    func mixed() {
        let merged = ScanFilter.merge(
            [filter(uuids: [Fixture.hrs], rssi: -40, transport: .le), nil], adapterTransport: .dual)
        #expect(merged == ScanFilter(transport: .dual, rssi: nil, uuids: []))
    }

    @Test("the scan filter drops weak reports, reports without a wanted UUID, and LE when scanning BR/EDR")
    func passes() {
        let scan = ScanFilter(transport: .le, rssi: -70, uuids: [Fixture.hrs])
        #expect(scan.passes(Fixture.report(1, rssi: -70, uuids: [Fixture.hrs])))
        #expect(!scan.passes(Fixture.report(1, rssi: -71, uuids: [Fixture.hrs])))
        #expect(!scan.passes(Fixture.report(1, rssi: -50, uuids: [Fixture.battery])))
        #expect(!ScanFilter(transport: .bredr, rssi: nil, uuids: []).passes(Fixture.report(1)))
    }
}
