import BLETesting
import DBus
import Testing

/// The fixture scenario's devices.
enum Air {
    static let scenario = repositoryRoot + "/Tests/BlesimTests/Fixtures/air.json"
    /// The fixture's ATT MTU (`mtu`).
    static let mtu = 64
    static let near = "/org/bluez/hci0/dev_C0_00_00_00_00_0A"
    static let far = "/org/bluez/hci0/dev_C0_00_00_00_00_0B"
    static let hrm = "/org/bluez/hci0/dev_C0_00_00_00_00_0C"
    static let hidden = "/org/bluez/hci0/dev_C0_00_00_00_00_0D"
}

/// blesim, the built binary, on a private bus, driven as a client would.
@Suite("blesim serves org.bluez", .serialized)
struct BlesimTests {
    @Test("adapters hci0 and hci1 are present with bluetoothd's Adapter1 properties (--adapters 2)")
    func adapters() async throws {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(
            address: bus.address, scenario: nil, options: ["--scenario", Air.scenario, "--adapters", "2"])
        let client = try await BlueZClient.connect(bus)
        let objects = try await client.managedObjects()
        #expect(objects["/org/bluez"]?["org.bluez.AgentManager1"] != nil)
        let hci0 = try #require(objects["/org/bluez/hci0"]?["org.bluez.Adapter1"])
        #expect(hci0["Address"] == .string("00:AA:01:00:00:00"))
        #expect(hci0["AddressType"] == .string("public"))
        #expect(hci0["Powered"] == .boolean(true))
        #expect(hci0["Discovering"] == .boolean(false))
        #expect(hci0["Roles"] == .array(.string, [.string("central"), .string("peripheral")]))
        #expect(objects["/org/bluez/hci1"]?["org.bluez.Adapter1"]?["Address"] == .string("00:AA:01:00:00:01"))
        _ = sim
    }

    @Test("Powered can be switched off and on; discovery is NotReady while off")
    func powered() async throws {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(
            address: bus.address, scenario: nil, options: ["--scenario", Air.scenario])
        let client = try await BlueZClient.connect(bus)
        try await client.setProperty("/org/bluez/hci0", "org.bluez.Adapter1", "Powered", .boolean(false))
        #expect(
            await client.log.wait { Signals.changes($0).contains { $0.changed["Powered"] == .boolean(false) } })
        #expect(try await client.property("/org/bluez/hci0", "org.bluez.Adapter1", "Powered") == .boolean(false))
        #expect(await client.errorName { try await client.adapter("StartDiscovery") } == "org.bluez.Error.NotReady")
        try await client.setProperty("/org/bluez/hci0", "org.bluez.Adapter1", "Powered", .boolean(true))
        #expect(await client.errorName { try await client.adapter("StartDiscovery") } == nil)
        _ = sim
    }

    @Test("powering off during discovery ends it: Discovering goes false")
    func powerOffStopsDiscovery() async throws {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(
            address: bus.address, scenario: nil, options: ["--scenario", Air.scenario])
        let client = try await BlueZClient.connect(bus)
        try await client.adapter("StartDiscovery")
        #expect(await client.log.wait { Signals.discovering($0, is: true) })
        try await client.setProperty("/org/bluez/hci0", "org.bluez.Adapter1", "Powered", .boolean(false))
        #expect(await client.log.wait { Signals.discovering($0, is: false) })
        _ = sim
    }

    @Test("a discovery finds the scenario's discoverable devices with their advertised properties")
    func discovery() async throws {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(
            address: bus.address, scenario: nil, options: ["--scenario", Air.scenario])
        let client = try await BlueZClient.connect(bus)
        try await client.adapter("StartDiscovery")
        let found = await client.log.wait { messages in
            let added = Signals.addedDevices(messages)
            return [Air.near, Air.far, Air.hrm].allSatisfy { added[$0] != nil }
        }
        #expect(found)
        let added = Signals.addedDevices(client.log.messages)
        let near = try #require(added[Air.near])
        #expect(near["Address"] == .string("C0:00:00:00:00:0A"))
        #expect(near["AddressType"] == .string("random"))
        #expect(near["Name"] == .string("Near-A"))
        #expect(near["Alias"] == .string("Near-A"))
        #expect(near["RSSI"] == .int16(-53))
        #expect(near["TxPower"] == .int16(4))
        #expect(near["UUIDs"] == .array(.string, [.string("6e400001-b5a3-f393-e0a9-e50e24dcca9e")]))
        #expect(
            near["ManufacturerData"]
                == .dictionary(
                    key: .uint16, value: .variant, [(key: .uint16(0x02E5), value: .variant(.bytes([1, 1])))]))
        #expect(near["Connected"] == .boolean(false))
        #expect(near["ServicesResolved"] == .boolean(false))
        #expect(near["Adapter"] == .objectPath(try ObjectPath("/org/bluez/hci0")))
        let hrm = try #require(added[Air.hrm])
        #expect(hrm["Appearance"] == .uint16(833))
        #expect(
            hrm["ServiceData"]
                == .dictionary(
                    key: .string, value: .variant,
                    [(key: .string("0000180f-0000-1000-8000-00805f9b34fb"), value: .variant(.bytes([0x64])))]))
        #expect(added[Air.hidden] == nil, "a device whose flags say non-discoverable needs a filtered discovery")
        #expect(try await client.managedObjects()[Air.near]?["org.bluez.Device1"]?["Name"] == .string("Near-A"))
        _ = sim
    }

    @Test("a device's Alias can be set")
    func deviceAlias() async throws {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(
            address: bus.address, scenario: nil, options: ["--scenario", Air.scenario])
        let client = try await BlueZClient.connect(bus)
        try await client.adapter("StartDiscovery")
        #expect(await client.log.wait { Signals.addedDevices($0)[Air.near] != nil })
        try await client.setProperty(Air.near, "org.bluez.Device1", "Alias", .string("Counter"))
        #expect(try await client.property(Air.near, "org.bluez.Device1", "Alias") == .string("Counter"))
        _ = sim
    }

    @Test("a UUID filter: only devices advertising the service appear")
    func uuidFilter() async throws {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(
            address: bus.address, scenario: nil, options: ["--scenario", Air.scenario])
        let client = try await BlueZClient.connect(bus)
        let filter = DBusValue.dictionary(
            key: .string, value: .variant,
            [(key: .string("UUIDs"), value: .variant(.array(.string, [.string("180D")])))])
        try await client.adapter("SetDiscoveryFilter", [filter])
        try await client.adapter("StartDiscovery")
        // A filtered discovery reports every advertisement's RSSI: twenty of the heart-rate
        // monitor's mean the others (advertising as often) had twenty chances to appear too.
        #expect(await client.log.wait { Signals.rssiUpdates($0, path: Air.hrm) >= 20 })
        #expect(Set(Signals.addedDevices(client.log.messages).keys) == [Air.hrm])
        _ = sim
    }

    @Test("an RSSI filter: weaker devices stay hidden; a filtered discovery shows non-discoverable ones")
    func rssiFilter() async throws {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(
            address: bus.address, scenario: nil, options: ["--scenario", Air.scenario])
        let client = try await BlueZClient.connect(bus)
        let filter = DBusValue.dictionary(
            key: .string, value: .variant, [(key: .string("RSSI"), value: .variant(.int16(-70)))])
        try await client.adapter("SetDiscoveryFilter", [filter])
        try await client.adapter("StartDiscovery")
        #expect(await client.log.wait { Signals.rssiUpdates($0, path: Air.hrm) >= 20 })
        #expect(Set(Signals.addedDevices(client.log.messages).keys) == [Air.near, Air.hrm, Air.hidden])
        _ = sim
    }

    @Test("a client that leaves the bus loses its discovery session: Discovering goes false")
    func clientLeaves() async throws {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(
            address: bus.address, scenario: nil, options: ["--scenario", Air.scenario])
        let watcher = try await BlueZClient.connect(bus)
        let scanner = try await BlueZClient.connect(bus)
        try await scanner.adapter("StartDiscovery")
        #expect(await watcher.log.wait { Signals.discovering($0, is: true) })
        await scanner.connection.close()
        #expect(await watcher.log.wait { Signals.discovering($0, is: false) })
        #expect(try await watcher.property("/org/bluez/hci0", "org.bluez.Adapter1", "Discovering") == .boolean(false))
        _ = sim
    }

    @Test("errors carry bluetoothd's names")
    func errors() async throws {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(
            address: bus.address, scenario: nil, options: ["--scenario", Air.scenario])
        let client = try await BlueZClient.connect(bus)
        #expect(await client.errorName { try await client.adapter("StopDiscovery") } == "org.bluez.Error.Failed")
        try await client.adapter("StartDiscovery")
        #expect(await client.errorName { try await client.adapter("StartDiscovery") } == "org.bluez.Error.InProgress")
        let bad = DBusValue.dictionary(
            key: .string, value: .variant, [(key: .string("RSSI"), value: .variant(.int16(-200)))])
        #expect(
            await client.errorName { try await client.adapter("SetDiscoveryFilter", [bad]) }
                == "org.bluez.Error.InvalidArguments")
        let unknown = DBusValue.objectPath(try ObjectPath("/org/bluez/hci0/dev_00_11_22_33_44_55"))
        #expect(
            await client.errorName { try await client.adapter("RemoveDevice", [unknown]) }
                == "org.bluez.Error.DoesNotExist")
        let filters = try await client.call("/org/bluez/hci0", "org.bluez.Adapter1", "GetDiscoveryFilters")
        #expect(
            filters.first
                == .array(
                    .string,
                    ["UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern"].map(
                        DBusValue.string)))
        #expect(await client.log.wait { Signals.addedDevices($0)[Air.near] != nil })
        try await client.adapter("RemoveDevice", [.objectPath(try ObjectPath(Air.near))])
        #expect(
            await client.log.wait { messages in
                messages.contains {
                    $0.member == "InterfacesRemoved" && (try? $0.arguments().first?.stringValue) == Air.near
                }
            })
        _ = sim
    }
}
