import BLE
import BlueZ
import Testing

/// The central backend's decoding of BlueZ's adapters: what reaches the manager of an Adapter1.
@Suite struct AdapterTableTests {
    let hci0 = "/org/bluez/hci0"
    let device = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF"

    func adapter1(powered: Bool, address: String = "00:11:22:33:44:55") -> PropertyMap {
        ["Address": .string(address), "Powered": .bool(powered), "Discovering": .bool(false)]
    }

    func events(
        _ delta: ObjectTreeDelta, serial: UInt32? = nil, in table: inout BlueZAdapterTable
    )
        -> [CentralBackendEvent]
    {
        var events: [CentralBackendEvent] = []
        table.signal(delta, serial: serial) { events.append($0) }
        return events
    }

    @Test func aSnapshotLosesItsAdapter1AndNamesItsAdapters() {
        var table = BlueZAdapterTable()
        var tree: ObjectTreeSnapshot = [
            hci0: [BlueZInterface.adapter: adapter1(powered: true), BlueZInterface.gattManager: [:]],
            "/org/bluez/hci1": [BlueZInterface.adapter: adapter1(powered: false, address: "00:11:22:33:44:66")],
            device: [BlueZInterface.device: ["Address": .string("AA:BB:CC:DD:EE:FF")]],
        ]
        let adapters = table.snapshot(&tree, serial: 7)
        #expect(
            adapters == [
                AdapterStatus(id: hci0, name: "hci0", address: "00:11:22:33:44:55", powered: true),
                AdapterStatus(id: "/org/bluez/hci1", name: "hci1", address: "00:11:22:33:44:66", powered: false),
            ])
        #expect(tree[hci0] == [BlueZInterface.gattManager: [:]], "the adapter's other interfaces stay")
        #expect(tree["/org/bluez/hci1"] == nil, "an object left with no interface goes")
        #expect(tree[device] != nil)
    }

    @Test func adapterSignalsBecomeTypedEventsAndOthersPassUnchanged() {
        var table = BlueZAdapterTable()
        var tree: ObjectTreeSnapshot = [hci0: [BlueZInterface.adapter: adapter1(powered: true)]]
        _ = table.snapshot(&tree, serial: nil)
        let report = ObjectTreeDelta.propertiesChanged(
            path: device, interface: BlueZInterface.device, changed: ["RSSI": .int(-40)], invalidated: [])
        #expect(events(report, serial: 3, in: &table) == [.delta(report, serial: 3)])
        let off = ObjectTreeDelta.propertiesChanged(
            path: hci0, interface: BlueZInterface.adapter, changed: ["Powered": .bool(false)], invalidated: [])
        #expect(
            events(off, in: &table) == [
                .adapterUpdated(.init(id: hci0, name: "hci0", address: "00:11:22:33:44:55", powered: false))
            ])
        #expect(events(off, in: &table).isEmpty, "no event without a change")
        let discovering = ObjectTreeDelta.propertiesChanged(
            path: hci0, interface: BlueZInterface.adapter, changed: ["Discovering": .bool(true)], invalidated: [])
        #expect(events(discovering, in: &table).isEmpty, "only the address and power reach the manager")
        let gone = ObjectTreeDelta.interfacesRemoved(
            path: hci0, interfaces: [BlueZInterface.adapter, BlueZInterface.gattManager])
        #expect(
            events(gone, in: &table) == [
                .adapterRemoved(id: hci0),
                .delta(.interfacesRemoved(path: hci0, interfaces: [BlueZInterface.gattManager]), serial: nil),
            ])
        let back = ObjectTreeDelta.interfacesAdded(
            path: "/org/bluez/hci2", interfaces: [BlueZInterface.adapter: adapter1(powered: true)])
        #expect(
            events(back, in: &table) == [
                .adapterUpdated(.init(id: "/org/bluez/hci2", name: "hci2", address: "00:11:22:33:44:55", powered: true))
            ])
    }

    @Test func aSnapshotOlderThanAnAdapterSignalKeepsWhatTheSignalSaid() {
        var table = BlueZAdapterTable()
        var first: ObjectTreeSnapshot = [hci0: [BlueZInterface.adapter: adapter1(powered: true)]]
        _ = table.snapshot(&first, serial: 10)
        // Powered goes false (serial 25) before the reply to a second GetManagedObjects (serial 20) is handled.
        let off = ObjectTreeDelta.propertiesChanged(
            path: hci0, interface: BlueZInterface.adapter, changed: ["Powered": .bool(false)], invalidated: [])
        #expect(events(off, serial: 25, in: &table).count == 1)
        var reply: ObjectTreeSnapshot = [hci0: [BlueZInterface.adapter: adapter1(powered: true)]]
        #expect(table.snapshot(&reply, serial: 20).map(\.powered) == [false], "the reply is older than the signal")
        var later: ObjectTreeSnapshot = [hci0: [BlueZInterface.adapter: adapter1(powered: true)]]
        #expect(table.snapshot(&later, serial: 40).map(\.powered) == [true], "a newer reply is the truth")
    }
}
