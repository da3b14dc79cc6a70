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
        table.record(near, .init(name: "near", rssi: -40, services: []), now: t0)
        table.record(gone, .init(name: "gone", rssi: -70, services: []), now: t0 + .seconds(1))
        #expect(table.due(now: t0 + .seconds(29)).isEmpty)
        #expect(table.due(now: t0 + .seconds(31)) == [near, gone])
        table.expire(now: t0 + .seconds(31), keeping: [near])
        #expect(table.sorted.map(\.id) == [near])
        #expect(table.counters.expired == 1)
        #expect(table.due(now: t0 + .seconds(60)).isEmpty, "the kept row was renewed")
        table.expire(now: t0 + .seconds(61), keeping: [])
        #expect(table.count == 0)
        #expect(table.counters.expired == 2)
    }
}
