import BLETesting
import DBus
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Connect, Disconnect and remote GATT on the fixture's heart-rate device, as bluetoothd 5.66.
@Suite("blesim serves remote GATT", .serialized)
struct RemoteGATTTests {
    @Test(
        "Connect: Connected, then the GATT objects (handle-named paths), then ServicesResolved; Disconnect in reverse")
    func connectOrder() async throws {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(
            address: bus.address, scenario: nil, options: ["--scenario", Air.scenario])
        let client = try await BlueZClient.connect(bus)
        try await client.connectHRM()
        let messages = client.log.messages
        let connected = messages.firstIndex { m in BlueZClient.changed([m], Air.hrm, "Connected", .boolean(true)) }
        let service = messages.firstIndex { m in
            m.member == "InterfacesAdded" && (try? m.arguments().first?.stringValue) == HRM.heartRate
        }
        let resolved = messages.firstIndex { m in
            BlueZClient.changed([m], Air.hrm, "ServicesResolved", .boolean(true))
        }
        let order = try [#require(connected), #require(service), #require(resolved)]
        #expect(order == order.sorted())
        let objects = try await client.managedObjects()
        #expect(
            objects[HRM.heartRate]?["org.bluez.GattService1"]?["UUID"]
                == .string("0000180d-0000-1000-8000-00805f9b34fb"))
        #expect(objects[HRM.heartRate]?["org.bluez.GattService1"]?["Primary"] == .boolean(true))
        let measurement = try #require(objects[HRM.measurement]?[BlueZClient.characteristic])
        #expect(measurement["Flags"] == .array(.string, [.string("notify")]))
        #expect(measurement["Notifying"] == .boolean(false))
        #expect(measurement["NotifyAcquired"] == .boolean(false))
        #expect(measurement["MTU"] == .uint16(64))
        #expect(measurement["Service"] == .objectPath(try ObjectPath(HRM.heartRate)))
        #expect(
            objects[HRM.measurementCCCD]?["org.bluez.GattDescriptor1"]?["UUID"]
                == .string("00002902-0000-1000-8000-00805f9b34fb"))
        #expect(objects[HRM.command]?[BlueZClient.characteristic]?["WriteAcquired"] == .boolean(false))

        _ = try await client.call(Air.hrm, "org.bluez.Device1", "Disconnect")
        #expect(await client.log.wait { BlueZClient.changed($0, Air.hrm, "Connected", .boolean(false)) })
        let after = client.log.messages
        let unresolved = after.lastIndex { m in BlueZClient.changed([m], Air.hrm, "ServicesResolved", .boolean(false)) }
        let down = after.lastIndex { m in BlueZClient.changed([m], Air.hrm, "Connected", .boolean(false)) }
        #expect(try #require(unresolved) < #require(down))
        // bluetoothd keeps the objects (its cache); reads fail while disconnected.
        #expect(try await client.managedObjects()[HRM.batteryLevel] != nil)
        #expect(await client.errorName { _ = try await client.read(HRM.batteryLevel) } == "org.bluez.Error.Failed")
        _ = sim
    }

    @Test("ReadValue and WriteValue: short, long (offset), reliable; errors as gatt-client.c reports them")
    func readWrite() async throws {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(
            address: bus.address, scenario: nil, options: ["--scenario", Air.scenario])
        let client = try await BlueZClient.connect(bus)
        try await client.connectHRM()
        #expect(try await client.read(HRM.batteryLevel) == [100])
        #expect(try await client.read(HRM.bodySensorLocation) == [1])
        let text = Array(HRM.longText.utf8)
        #expect(try await client.read(HRM.longNote) == text)
        #expect(try await client.read(HRM.longNote, offset: 10) == Array(text[10...]))
        #expect(
            try await client.read(HRM.longNoteDescription, interface: "org.bluez.GattDescriptor1")
                == Array("Long note".utf8))
        let long = (0..<300).map { UInt8(truncatingIfNeeded: $0) }
        try await client.write(HRM.longNote, long)
        #expect(try await client.read(HRM.longNote) == long)
        try await client.write(HRM.longNote, [0xAA, 0xBB], offset: 298, type: "reliable")
        #expect(try await client.read(HRM.longNote).suffix(3) == [297 % 256, 0xAA, 0xBB].map { UInt8($0) })
        let invalid = "org.bluez.Error.InvalidArguments"
        #expect(await client.errorName { _ = try await client.read(HRM.longNote, offset: 400) } == invalid)
        #expect(await client.errorName { try await client.write(HRM.longNote, [1], offset: 512) } == invalid)
        #expect(await client.errorName { _ = try await client.read(HRM.writeOnly) } == "org.bluez.Error.NotPermitted")
        #expect(
            await client.errorName { try await client.write(HRM.measurement, [1]) } == "org.bluez.Error.NotSupported")
        #expect(
            await client.errorName { try await client.write(HRM.measurement, [1], type: "request") }
                == "org.bluez.Error.NotPermitted")
        #expect(
            await client.errorName {
                try await client.write(HRM.measurementCCCD, [1, 0], interface: "org.bluez.GattDescriptor1")
            } == "org.bluez.Error.NotPermitted")
        try await client.write(HRM.command, [1, 2, 3])
        _ = sim
    }

    @Test("StartNotify: Notifying, then a Value change per notification; StopNotify ends the client's session")
    func notifications() async throws {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(
            address: bus.address, scenario: nil, options: ["--scenario", Air.scenario])
        let client = try await BlueZClient.connect(bus)
        try await client.connectHRM()
        _ = try await client.call(HRM.measurement, BlueZClient.characteristic, "StartNotify")
        #expect(await client.log.wait { BlueZClient.changed($0, HRM.measurement, "Notifying", .boolean(true)) })
        #expect(await client.log.wait { BlueZClient.values($0, HRM.measurement).count >= 3 })
        let values = BlueZClient.values(client.log.messages, HRM.measurement)
        #expect(values.allSatisfy { [[6, 0x48], [6, 0x4a], [6, 0x4c], [6, 0x4e]].contains($0) })
        _ = try await client.call(HRM.measurement, BlueZClient.characteristic, "StopNotify")
        #expect(await client.log.wait { BlueZClient.changed($0, HRM.measurement, "Notifying", .boolean(false)) })
        #expect(
            await client.errorName {
                _ = try await client.call(HRM.measurement, BlueZClient.characteristic, "StopNotify")
            }
                == "org.bluez.Error.Failed")
        _ = sim
    }

    @Test("AcquireNotify: a SOCK_SEQPACKET socket with the MTU delivers notifications; closing it releases")
    func acquireNotify() async throws {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(
            address: bus.address, scenario: nil, options: ["--scenario", Air.scenario])
        let client = try await BlueZClient.connect(bus)
        try await client.connectHRM()
        let reply = try await client.call(
            HRM.measurement, BlueZClient.characteristic, "AcquireNotify", [BlueZClient.emptyOptions])
        guard reply.count == 2, case .unixFD(let fd) = reply[0], case .uint16(let mtu) = reply[1] else {
            Issue.record("AcquireNotify replied \(reply)")
            return
        }
        #expect(mtu == 64)
        #expect(await client.log.wait { BlueZClient.changed($0, HRM.measurement, "NotifyAcquired", .boolean(true)) })
        let raw = try #require(fd.take())
        var packets: [[UInt8]] = []
        for _ in 0..<2 {
            guard let packet = await readWhenReady(raw, capacity: 64, within: .seconds(30)), !packet.isEmpty else {
                break
            }
            packets.append(packet)
        }
        #expect(packets.count == 2)
        #expect(packets.allSatisfy { $0.count == 2 && $0[0] == 6 })
        close(raw)
        #expect(await client.log.wait { BlueZClient.changed($0, HRM.measurement, "NotifyAcquired", .boolean(false)) })
        _ = sim
    }
    @Test(
        "AcquireWrite: a socket with the MTU, WriteAcquired true; WriteValue meanwhile is NotPermitted \"Write acquired\"; closing releases"
    )
    func acquireWrite() async throws {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(
            address: bus.address, scenario: nil, options: ["--scenario", Air.scenario])
        let client = try await BlueZClient.connect(bus)
        try await client.connectHRM()
        let reply = try await client.call(
            HRM.command, BlueZClient.characteristic, "AcquireWrite", [BlueZClient.emptyOptions])
        guard reply.count == 2, case .unixFD(let fd) = reply[0], case .uint16(let mtu) = reply[1] else {
            Issue.record("AcquireWrite replied \(reply)")
            return
        }
        #expect(mtu == 64)
        #expect(await client.log.wait { BlueZClient.changed($0, HRM.command, "WriteAcquired", .boolean(true)) })
        let raw = try #require(fd.take())
        let packet: [UInt8] = [1, 2, 3]
        #expect(packet.withUnsafeBytes { send(raw, $0.baseAddress, $0.count, 0) } == 3)
        do {
            try await client.write(HRM.command, [4], type: "command")
            Issue.record("WriteValue went through while the write was acquired")
        } catch let error as DBusError {
            #expect(error.name.rawValue == "org.bluez.Error.NotPermitted")
            #expect(error.message == "Write acquired")
        }
        close(raw)
        #expect(await client.log.wait { BlueZClient.changed($0, HRM.command, "WriteAcquired", .boolean(false)) })
        try await client.write(HRM.command, [5], type: "command")
        _ = sim
    }
}
