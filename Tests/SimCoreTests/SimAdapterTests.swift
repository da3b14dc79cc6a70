import GATT
import SimCore
import Testing

@Suite("Adapter1 state and device objects, as bluetoothd 5.66")
struct SimAdapterTests {
    let t0 = SimInstant.zero

    @Test("discovery methods on a powered-off adapter are NotReady")
    func poweredOff() {
        var adapter = Fixture.adapter()
        _ = adapter.setPowered(false)
        #expect(throws: BluetoothdError.notReady) { try adapter.startDiscovery(owner: ":1.1") }
        #expect(throws: BluetoothdError.notReady) { try adapter.stopDiscovery(owner: ":1.1") }
        #expect(throws: BluetoothdError.notReady) { try adapter.setDiscoveryFilter(owner: ":1.1", []) }
        #expect(throws: BluetoothdError.failed("Not Powered")) { try adapter.setDiscoverable(true) }
    }

    @Test("the first StartDiscovery sets Discovering; the last StopDiscovery clears it")
    func discoveringProperty() throws {
        var adapter = Fixture.adapter()
        let r1 = try adapter.startDiscovery(owner: ":1.1")
        #expect(r1.adapterChanges == [Property("Discovering", .bool(true))])
        let r2 = try adapter.startDiscovery(owner: ":1.2")
        #expect(r2.isEmpty)
        let r3 = try adapter.stopDiscovery(owner: ":1.1")
        #expect(r3.isEmpty)
        let r4 = adapter.clientLeft(owner: ":1.2")
        #expect(r4.adapterChanges == [Property("Discovering", .bool(false))])
        #expect(!adapter.discovering)
    }

    @Test("a new device appears with all its properties at once (InterfacesAdded)")
    func deviceAdded() throws {
        var adapter = Fixture.adapter()
        _ = try adapter.startDiscovery(owner: ":1.1")
        let events = adapter.receive(
            Fixture.report(7, rssi: -61, name: "Pay 1", uuids: [Fixture.hrs], txPower: 4, manufacturer: [1, 2]), at: t0)
        guard case .deviceAdded(let address, let properties) = events.first, events.count == 1 else {
            Issue.record("expected one deviceAdded, got \(events)")
            return
        }
        #expect(address == Fixture.address(7))
        let byName = Dictionary(uniqueKeysWithValues: properties.map { ($0.name, $0.value) })
        #expect(byName["Address"] == .string("C0:11:22:33:44:07"))
        #expect(byName["Name"] == .string("Pay 1"))
        #expect(byName["Alias"] == .string("Pay 1"))
        #expect(byName["RSSI"] == .int16(-61))
        #expect(byName["TxPower"] == .int16(4))
        #expect(byName["UUIDs"] == .strings([Fixture.hrs.uuidString]))
        #expect(byName["ManufacturerData"] == .manufacturerData([ManufacturerDatum(company: 0x004C, data: [1, 2])]))
        #expect(byName["Connected"] == .bool(false))
        #expect(byName["Adapter"] == .objectPath("/org/bluez/hci0"))
        #expect(byName["AdvertisingFlags"] == nil, "experimental in bluetoothd 5.66: only with -E")
        #expect(adapter.devicePath(address) == "/org/bluez/hci0/dev_C0_11_22_33_44_07")
    }

    @Test("AdvertisingFlags is served only in experimental mode (bluetoothd -E)")
    func experimentalFlags() throws {
        var adapter = Fixture.adapter(experimental: true)
        _ = try adapter.startDiscovery(owner: ":1.1")
        guard case .deviceAdded(_, let properties) = adapter.receive(Fixture.report(9), at: t0).first else {
            Issue.record("no device")
            return
        }
        #expect(properties.first { $0.name == "AdvertisingFlags" }?.value == .bytes([0x06]))
    }

    @Test("a nameless device's Alias is its address with dashes, and Name is absent")
    func nameless() throws {
        var adapter = Fixture.adapter()
        _ = try adapter.startDiscovery(owner: ":1.1")
        guard case .deviceAdded(_, let properties) = adapter.receive(Fixture.report(8, name: nil), at: t0).first else {
            Issue.record("no device")
            return
        }
        #expect(properties.first { $0.name == "Alias" }?.value == .string("C0-11-22-33-44-08"))
        #expect(!properties.contains { $0.name == "Name" })
    }

    @Test("unfiltered discovery reports RSSI changes of 8 dBm or more only")
    func rssiDelta() throws {
        var adapter = Fixture.adapter()
        _ = try adapter.startDiscovery(owner: ":1.1")
        _ = adapter.receive(Fixture.report(1, rssi: -60), at: t0)
        let r5 = adapter.receive(Fixture.report(1, rssi: -67), at: t0)
        #expect(r5.isEmpty)
        let r6 = adapter.receive(Fixture.report(1, rssi: -68), at: t0)
        #expect(r6.changedDeviceProperties == ["RSSI"])
        #expect(adapter.devices[Fixture.address(1)]?.rssi == -68)
    }

    @Test("filtered discovery reports every RSSI, even unchanged")
    func rssiFiltered() throws {
        var adapter = Fixture.adapter()
        _ = try adapter.setDiscoveryFilter(owner: ":1.1", [("Transport", .string("le"))])
        _ = try adapter.startDiscovery(owner: ":1.1")
        _ = adapter.receive(Fixture.report(1, rssi: -60), at: t0)
        let r7 = adapter.receive(Fixture.report(1, rssi: -60), at: t0)
        #expect(r7.changedDeviceProperties == ["RSSI"])
        let r8 = adapter.receive(Fixture.report(1, rssi: -61), at: t0)
        #expect(r8.changedDeviceProperties == ["RSSI"])
    }

    @Test("ManufacturerData is reported when it changes, or every time with DuplicateData")
    func duplicateData() throws {
        var adapter = Fixture.adapter()
        _ = try adapter.startDiscovery(owner: ":1.1")
        _ = adapter.receive(Fixture.report(1, manufacturer: [1]), at: t0)
        let r9 = adapter.receive(Fixture.report(1, manufacturer: [1]), at: t0)
        #expect(r9.isEmpty)
        let r10 = adapter.receive(Fixture.report(1, manufacturer: [2]), at: t0)
        #expect(r10.changedDeviceProperties == ["ManufacturerData"])
        _ = try adapter.setDiscoveryFilter(owner: ":1.1", [("DuplicateData", .bool(true))])
        #expect(
            adapter.receive(Fixture.report(1, manufacturer: [2]), at: t0).changedDeviceProperties == [
                "RSSI", "ManufacturerData",
            ])
    }

    @Test("advertisementReports counts each report that reached the bus: a new device or a change, not a repeat")
    func reportCount() throws {
        var adapter = Fixture.adapter()
        _ = adapter.receive(Fixture.report(1), at: t0)
        #expect(adapter.advertisementReports == 0)
        _ = try adapter.startDiscovery(owner: ":1.1")
        _ = adapter.receive(Fixture.report(1, manufacturer: [1]), at: t0)
        _ = adapter.receive(Fixture.report(1, manufacturer: [1]), at: t0)
        #expect(adapter.advertisementReports == 1)
        _ = adapter.receive(Fixture.report(1, manufacturer: [2]), at: t0)
        _ = adapter.receive(Fixture.report(2), at: t0)
        #expect(adapter.advertisementReports == 3)
        _ = try adapter.setDiscoveryFilter(owner: ":1.1", [("DuplicateData", .bool(true))])
        for _ in 0..<5 { _ = adapter.receive(Fixture.report(1, manufacturer: [2]), at: t0) }
        #expect(adapter.advertisementReports == 8)
    }

    @Test(
        "a temporary device unseen for TemporaryTimeout goes away; each sighting restarts the timer, one that changes nothing (no signal) too"
    )
    func temporaryExpiry() throws {
        var adapter = Fixture.adapter(temporaryTimeout: 30)
        _ = try adapter.startDiscovery(owner: ":1.1")
        _ = adapter.receive(Fixture.report(1), at: .seconds(0))
        #expect(adapter.receive(Fixture.report(1), at: .seconds(20)).isEmpty, "heard unchanged: no signal")
        let r11 = adapter.expire(at: .seconds(49))
        #expect(r11.isEmpty)
        #expect(adapter.nextExpiry == .seconds(50))
        let r12 = adapter.expire(at: .seconds(50))
        #expect(r12.removedDevices == [Fixture.address(1)])
        #expect(adapter.devices.isEmpty)
    }

    @Test(
        "in a crowd each temporary device goes at its own expiry, not before, heard-again ones later, a returning one anew"
    )
    func crowdExpiry() throws {
        var adapter = Fixture.adapter(temporaryTimeout: 30)
        _ = try adapter.startDiscovery(owner: ":1.1")
        // Device n is first heard at n/10 s; every third is heard again 25 s later (its timer restarts).
        var expected: [DeviceAddress: SimInstant] = [:]
        for last in UInt8(0)..<200 {
            _ = adapter.receive(Fixture.report(last), at: .seconds(Double(last) / 10))
            expected[Fixture.address(last)] = .seconds(Double(last) / 10 + 30)
        }
        for last in stride(from: UInt8(0), to: 200, by: 3) {
            _ = adapter.receive(Fixture.report(last), at: .seconds(Double(last) / 10 + 25))
            expected[Fixture.address(last)] = .seconds(Double(last) / 10 + 55)
        }
        var removedAt: [DeviceAddress: SimInstant] = [:]
        var now = SimInstant.seconds(25)
        while let next = adapter.nextExpiry, removedAt.count < 200 {
            #expect(next >= now || adapter.expire(at: now).isEmpty, "no deadline in the past is left behind")
            now = max(now, next)
            for address in adapter.expire(at: now).removedDevices {
                #expect(removedAt[address] == nil, "removed once")
                removedAt[address] = now
            }
            if now > .seconds(120) { break }
        }
        #expect(removedAt == expected, "each device went exactly at its expiry")
        #expect(adapter.devices.isEmpty)
        #expect(adapter.nextExpiry == nil)
        // A device heard again after it went is a new object with a fresh timer.
        _ = adapter.receive(Fixture.report(7), at: .seconds(200))
        #expect(adapter.expire(at: .seconds(229)).isEmpty)
        #expect(adapter.expire(at: .seconds(230)).removedDevices == [Fixture.address(7)])
    }

    @Test("stopping discovery invalidates RSSI and TxPower and drops non-connectable temporary devices")
    func cleanup() throws {
        var adapter = Fixture.adapter()
        _ = try adapter.startDiscovery(owner: ":1.1")
        _ = adapter.receive(Fixture.report(1, txPower: 0), at: t0)
        _ = adapter.receive(Fixture.report(2, connectable: false), at: t0)
        let events = try adapter.stopDiscovery(owner: ":1.1")
        #expect(events.contains(.deviceChanged(Fixture.address(1), changed: [], invalidated: ["RSSI", "TxPower"])))
        #expect(events.removedDevices == [Fixture.address(2)])
        #expect(events.adapterChanges == [Property("Discovering", .bool(false))])
        #expect(adapter.devices[Fixture.address(1)]?.rssi == nil)
    }

    @Test("powering off ends every session, sets Discovering false and is seen as Powered false")
    func powerOffStopsDiscovery() throws {
        var adapter = Fixture.adapter()
        _ = try adapter.startDiscovery(owner: ":1.1")
        let events = adapter.setPowered(false)
        #expect(events.adapterChanges == [Property("Discovering", .bool(false)), Property("Powered", .bool(false))])
        #expect(adapter.sessions.owners.isEmpty)
        let r13 = adapter.setPowered(true)
        #expect(r13.adapterChanges == [Property("Powered", .bool(true))])
        #expect(!adapter.discovering)
    }

    @Test("RemoveDevice: DoesNotExist for an unknown path; removes a known device")
    func removeDevice() throws {
        var adapter = Fixture.adapter()
        #expect(throws: BluetoothdError.doesNotExist) {
            try adapter.removeDevice(path: "/org/bluez/hci0/dev_00_00_00_00_00_00")
        }
        _ = try adapter.startDiscovery(owner: ":1.1")
        _ = adapter.receive(Fixture.report(3), at: t0)
        let events = try adapter.removeDevice(path: "/org/bluez/hci0/dev_C0_11_22_33_44_03")
        #expect(events.removedDevices == [Fixture.address(3)])
    }

    @Test("a Discoverable filter makes the adapter discoverable while discovering")
    func discoverableFilter() throws {
        var adapter = Fixture.adapter()
        _ = try adapter.setDiscoveryFilter(owner: ":1.1", [("Discoverable", .bool(true))])
        let r14 = try adapter.startDiscovery(owner: ":1.1")
        #expect(r14.adapterChanges.contains(Property("Discoverable", .bool(true))))
        let r15 = try adapter.stopDiscovery(owner: ":1.1")
        #expect(r15.adapterChanges.contains(Property("Discoverable", .bool(false))))
    }

    @Test("a device's Alias, Trusted and Blocked are settable; a blocked device is kept")
    func deviceSettables() throws {
        var adapter = Fixture.adapter()
        _ = try adapter.startDiscovery(owner: ":1.1")
        _ = adapter.receive(Fixture.report(4, name: "Till"), at: t0)
        let address = Fixture.address(4)
        #expect(try adapter.setDeviceAlias(address, "Front till").changedDeviceProperties == ["Alias"])
        #expect(adapter.devices[address]?.displayAlias == "Front till")
        _ = try adapter.setDeviceAlias(address, "")
        #expect(adapter.devices[address]?.displayAlias == "Till")
        #expect(try adapter.setTrusted(address, true).changedDeviceProperties == ["Trusted"])
        _ = try adapter.setBlocked(address, true)
        #expect(adapter.devices[address]?.temporary == false)
        #expect(adapter.expire(at: .seconds(3600)).isEmpty)
        #expect(throws: BluetoothdError.doesNotExist) { try adapter.setTrusted(Fixture.address(99), true) }
    }

    @Test("Alias is settable, and an empty alias returns to the name")
    func alias() {
        var adapter = Fixture.adapter()
        let r16 = adapter.setAlias("till 3")
        #expect(r16.adapterChanges == [Property("Alias", .string("till 3"))])
        let r17 = adapter.setAlias("")
        #expect(r17.adapterChanges == [Property("Alias", .string("blesim #0"))])
    }
}
