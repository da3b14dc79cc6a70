import GATT
import SimCore
import Testing

/// The pure GATT server of a virtual device and its scenario form.
@Suite("GATT server")
struct GATTServerTests {
    static let scenario = """
        { "devices": [ { "address": "C0:00:00:00:00:01", "rssi": { "distance": 1 }, "gatt": { "services": [
          { "uuid": "180D", "characteristics": [
            { "uuid": "2A37", "flags": ["notify"], "value": "0648",
              "behaviour": { "cycle": ["0650", "0660"], "everyMs": 1000 } } ] },
          { "uuid": "180F", "characteristics": [
            { "uuid": "2A19", "flags": ["read"], "value": { "int": 90, "format": "uint8" },
              "behaviour": { "counter": { "start": 90, "step": -5, "format": "uint8" }, "everyMs": 500 } },
            { "uuid": "2A00", "flags": ["read", "write", "reliable-write"], "value": { "utf8": "abc" },
              "descriptors": [ { "uuid": "2901", "value": { "utf8": "note" } } ] },
            { "uuid": "2A01", "flags": ["write-without-response"],
              "behaviour": { "script": [ { "at": 1, "value": "01" }, { "at": 2, "value": "02" } ] } } ] } ] } } ] }
        """

    static func server() throws -> GATTServer {
        let scenario = try Scenario.parse(Self.scenario)
        return GATTServer(try #require(scenario.devices.first?.gatt))
    }

    @Test(
        "handles follow bluetoothd's layout from 0x000a: service, declaration, value, CCCD, extended properties, descriptors"
    )
    func handles() throws {
        let server = try Self.server()
        #expect(server.services.map(\.handle) == [0x000a, 0x000e])
        let measurement = server.services[0].characteristics[0]
        #expect((measurement.handle, measurement.valueHandle) == (0x000b, 0x000c))
        #expect(measurement.descriptors.map(\.handle) == [0x000d])
        let name = server.services[1].characteristics[1]
        #expect(name.descriptors.map(\.uuid) == [GATTServer.extendedPropertiesUUID, BluetoothUUID(uuid16: 0x2901)])
        #expect(GATTObjects.clientFlags(name.flags) == ["read", "write", "extended-properties", "reliable-write"])
    }

    @Test(
        "an included service takes an Include declaration handle and appears in GattService1.Includes; a bad index is refused"
    )
    func includedServices() throws {
        let text = Self.scenario.replacing(
            #"{ "uuid": "180D", "characteristics""#, with: #"{ "uuid": "180D", "includes": [1], "characteristics""#)
        let server = GATTServer(try #require(try Scenario.parse(text).devices.first?.gatt))
        #expect(server.services.map(\.handle) == [0x000a, 0x000f])  // 0x000b is the Include declaration
        #expect(server.services[0].characteristics[0].handle == 0x000c)
        let objects = GATTObjects.objects(of: server, devicePath: "/d", link: GATTLink(device: 0, mtu: 23))
        let includes = objects.first { $0.path == "/d/service000a" }?.properties.first { $0.name == "Includes" }
        #expect(includes?.value == .objectPaths(["/d/service000f"]))
        for (bad, message) in [("[0]", "itself"), ("[2]", "out of range")] {
            let wrong = Self.scenario.replacing(
                #"{ "uuid": "180D", "characteristics""#,
                with: #"{ "uuid": "180D", "includes": "# + bad + #", "characteristics""#)
            #expect(throws: ScenarioError.self, "\(message)") { try Scenario.parse(wrong) }
            do {
                _ = try Scenario.parse(wrong)
            } catch {
                #expect(error.path == "devices[0].gatt.services[0].includes[0]", "\(message): \(error)")
            }
        }
    }

    @Test("reads from an offset; past the end is Invalid Offset; without read it is Read Not Permitted")
    func reads() throws {
        let server = try Self.server()
        let name = server.services[1].characteristics[1]
        #expect(try server.read(name.valueHandle, offset: 1) == Array("bc".utf8))
        #expect(try server.read(name.valueHandle, offset: 3) == [])
        #expect(throws: ATTError.invalidOffset) { try server.read(name.valueHandle, offset: 4) }
        #expect(throws: ATTError.readNotPermitted) { try server.read(0x000c) }
    }

    @Test("writes at an offset keep the head; past 512 bytes is Invalid Attribute Value Length")
    func writes() throws {
        var server = try Self.server()
        let handle = server.services[1].characteristics[1].valueHandle
        try server.write(handle, Array("XY".utf8), offset: 2)
        #expect(try server.read(handle) == Array("abXY".utf8))
        #expect(throws: ATTError.invalidAttributeValueLength) {
            try server.write(handle, [UInt8](repeating: 0, count: 510), offset: 4)
        }
        #expect(throws: ATTError.writeNotPermitted) { try server.write(0x000c, [1]) }
    }

    @Test("behaviours change values on the clock: a cycle, a counter, a script, in time order")
    func behaviours() throws {
        var server = try Self.server()
        #expect(server.nextDeadline == SimInstant.zero.advanced(bySeconds: 0.5))
        let changes = server.advance(to: SimInstant.zero.advanced(bySeconds: 2))
        #expect(changes.map(\.valueHandle) == [0x0010, 0x000c, 0x0010, 0x0016, 0x0010, 0x000c, 0x0010, 0x0016])
        #expect(try server.read(0x0010) == [70])
        #expect(server.services[0].characteristics[0].value == [6, 0x60])
        #expect(server.services[1].characteristics[2].value == [2])
    }
}
