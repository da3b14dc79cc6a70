import Testing

@testable import BLE

@Suite struct ManagerStateMachineTests {
    let hci0On = AdapterStatus(id: "/org/bluez/hci0", name: "hci0", powered: true)
    let hci0Off = AdapterStatus(id: "/org/bluez/hci0", name: "hci0", powered: false)
    let hci1On = AdapterStatus(id: "/org/bluez/hci1", name: "hci1", powered: true)

    @Test func startsUnknownAndIsPoweredOnOnlyOnceTheTreeShowsAPoweredAdapter() {
        var machine = ManagerStateMachine()
        #expect(machine.state == .unknown)
        #expect(machine.apply(.bluetoothdPresent(true)) == nil, "still unknown until the tree is read")
        #expect(machine.apply(.treeLoaded([hci0On])) == .poweredOn)
        #expect(machine.adapterID == "/org/bluez/hci0")
    }

    @Test func poweredFollowsTheAdapter() {
        var machine = ManagerStateMachine()
        _ = machine.apply(.bluetoothdPresent(true))
        #expect(machine.apply(.treeLoaded([hci0Off])) == .poweredOff)
        #expect(machine.apply(.adapterUpdated(hci0On)) == .poweredOn)
        #expect(machine.apply(.adapterUpdated(hci0On)) == nil, "no event without a change")
        #expect(machine.apply(.adapterRemoved(id: "/org/bluez/hci0")) == .unsupported)
    }

    @Test func noAdapterIsUnsupportedAndAMissingPreferredAdapterToo() {
        var machine = ManagerStateMachine()
        _ = machine.apply(.bluetoothdPresent(true))
        #expect(machine.apply(.treeLoaded([])) == .unsupported)
        var preferring = ManagerStateMachine(preferredAdapter: "hci1")
        _ = preferring.apply(.bluetoothdPresent(true))
        #expect(preferring.apply(.treeLoaded([hci0On])) == .unsupported)
        #expect(preferring.apply(.adapterUpdated(hci1On)) == .poweredOn)
        #expect(preferring.adapterID == "/org/bluez/hci1")
    }

    @Test func theAdapterIsChosenByNameAndTheFirstByNameWithoutOne() {
        var first = ManagerStateMachine()
        _ = first.apply(.bluetoothdPresent(true))
        #expect(first.apply(.treeLoaded([hci1On, hci0Off])) == .poweredOff, "hci0 comes first, and it is off")
        #expect(first.adapter?.name == "hci0")
        #expect(first.apply(.adapterRemoved(id: hci0Off.id)) == .poweredOn, "then hci1 is the first")
        #expect(first.adapterID == "/org/bluez/hci1")
        var named = ManagerStateMachine(preferredAdapter: "hci1")
        _ = named.apply(.bluetoothdPresent(true))
        #expect(named.apply(.treeLoaded([hci0Off, hci1On])) == .poweredOn)
        #expect(named.adapterID == "/org/bluez/hci1", "the backend's identifier of the adapter named hci1")
        var byPath = ManagerStateMachine(preferredAdapter: "/org/bluez/hci1")
        _ = byPath.apply(.bluetoothdPresent(true))
        #expect(byPath.apply(.treeLoaded([hci0On, hci1On])) == .unsupported, "a name, not the backend's identifier")
    }

    @Test func bluetoothdLeavingIsResettingAndItsReturnNeedsAFreshTree() {
        var machine = ManagerStateMachine()
        _ = machine.apply(.bluetoothdPresent(true))
        _ = machine.apply(.treeLoaded([hci0On]))
        #expect(machine.apply(.bluetoothdPresent(false)) == .resetting)
        #expect(machine.state.refusal?.code == .unavailable)
        #expect(machine.apply(.bluetoothdPresent(true)) == .unknown)
        #expect(machine.apply(.treeLoaded([hci0On])) == .poweredOn)
    }

    @Test func accessDeniedIsUnauthorized() {
        var machine = ManagerStateMachine()
        #expect(machine.apply(.accessDenied) == .unauthorized)
        #expect(machine.state.refusal?.code == .unauthorized)
    }

    @Test func onlyPoweredOnAllowsOperations() {
        #expect(ManagerState.poweredOn.refusal == nil)
        #expect(ManagerState.poweredOff.refusal?.code == .poweredOff)
        #expect(ManagerState.unsupported.refusal?.code == .unsupported)
    }
}
