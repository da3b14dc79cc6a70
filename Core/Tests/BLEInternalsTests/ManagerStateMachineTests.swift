import Testing

@testable import BLE

@Suite struct ManagerStateMachineTests {
    let hci0On = AdapterStatus(path: "/org/bluez/hci0", powered: true)
    let hci0Off = AdapterStatus(path: "/org/bluez/hci0", powered: false)

    @Test func startsUnknownAndIsPoweredOnOnlyOnceTheTreeShowsAPoweredAdapter() {
        var machine = ManagerStateMachine()
        #expect(machine.state == .unknown)
        #expect(machine.apply(.bluetoothdPresent(true)) == nil, "still unknown until the tree is read")
        #expect(machine.apply(.treeLoaded([hci0On])) == .poweredOn)
        #expect(machine.adapterPath == "/org/bluez/hci0")
    }

    @Test func poweredFollowsTheAdapter() {
        var machine = ManagerStateMachine()
        _ = machine.apply(.bluetoothdPresent(true))
        #expect(machine.apply(.treeLoaded([hci0Off])) == .poweredOff)
        #expect(machine.apply(.adapterUpdated(hci0On)) == .poweredOn)
        #expect(machine.apply(.adapterUpdated(hci0On)) == nil, "no event without a change")
        #expect(machine.apply(.adapterRemoved(path: "/org/bluez/hci0")) == .unsupported)
    }

    @Test func noAdapterIsUnsupportedAndAMissingPreferredAdapterToo() {
        var machine = ManagerStateMachine()
        _ = machine.apply(.bluetoothdPresent(true))
        #expect(machine.apply(.treeLoaded([])) == .unsupported)
        var preferring = ManagerStateMachine(preferredAdapter: "/org/bluez/hci1")
        _ = preferring.apply(.bluetoothdPresent(true))
        #expect(preferring.apply(.treeLoaded([hci0On])) == .unsupported)
        #expect(preferring.apply(.adapterUpdated(.init(path: "/org/bluez/hci1", powered: true))) == .poweredOn)
        #expect(preferring.adapterPath == "/org/bluez/hci1")
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
