import BLE
import Testing

@testable import AgentCore

@Suite("the control API's device table")
struct DeviceTableTests {
    let t0 = BLEInstant.zero
    let near = PeripheralIdentifier(adapter: "00:AA:01:00:00:01", address: "C0:00:00:00:00:01", addressType: .random)
    let gone = PeripheralIdentifier(adapter: "00:AA:01:00:00:01", address: "C0:00:00:00:00:02", addressType: .random)

    @Test(
        "a row the manager still holds stays past the expiry (a scan without duplicates discovers a device once), renewed; one it no longer holds goes"
    )
    func rowsStayWhileTheManagerHoldsTheirDevice() {
        var table = DeviceTable(capacity: 16, expiry: .seconds(30))
        table.record(near, .init(name: "near", rssi: -40), now: t0)
        table.record(gone, .init(name: "gone", rssi: -70), now: t0 + .seconds(1))
        #expect(table.due(now: t0 + .seconds(29)).isEmpty)
        #expect(table.due(now: t0 + .seconds(31)) == [near, gone])
        table.expire(now: t0 + .seconds(31), keeping: [near])
        #expect(table.sorted.map(\.key) == [near])
        #expect(table.counters.expired == 1)
        #expect(table.due(now: t0 + .seconds(60)).isEmpty, "the kept row was renewed")
        table.expire(now: t0 + .seconds(61), keeping: [])
        #expect(table.count == 0)
        #expect(table.counters.expired == 2)
    }

    @Test(
        "a discovery replaces its device's row and makes it the newest; past the capacity the least recently heard goes"
    )
    func theNewestDiscoveryWinsAndTheOldestGoesPastTheCapacity() {
        var table = DeviceTable(capacity: 2, expiry: .seconds(30))
        let third = PeripheralIdentifier(
            adapter: "00:AA:01:00:00:01", address: "C0:00:00:00:00:03", addressType: .random)
        table.record(near, .init(name: "near", rssi: -40), now: t0)
        table.record(gone, .init(name: "gone", rssi: -70), now: t0 + .seconds(1))
        table.record(near, .init(name: "renamed", rssi: -80), now: t0 + .seconds(2))
        table.record(third, .init(name: nil, rssi: nil), now: t0 + .seconds(3))
        #expect(table.counters.evicted == 1)
        #expect(table.sorted.map(\.key) == [near, third], "strongest first; no RSSI last")
        #expect(table.sorted.first?.value == .init(name: "renamed", rssi: -80))
        #expect(table.due(now: t0 + .seconds(32)) == [near])
    }

    @Test("a discovery's RSSI 127 (HCI's \"not available\") is unknown: listed last, not strongest")
    func rssiNotAvailableIsUnknown() {
        func discovery(_ id: PeripheralIdentifier, rssi: Int?) -> Discovery {
            Discovery(identifier: id, address: "C0:00:00:00:00:00", name: nil, rssi: rssi, advertisement: .init())
        }
        var table = DeviceTable(capacity: 16, expiry: .seconds(30))
        table.record(near, .init(discovery(near, rssi: 127)), now: t0)
        table.record(gone, .init(discovery(gone, rssi: -90)), now: t0)
        #expect(table.sorted.map(\.key) == [gone, near])
        #expect(table.sorted.map(\.value.rssi) == [-90, nil])
    }
}
