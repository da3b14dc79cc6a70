import BLETesting
import DBus
import Foundation
import Testing

/// Faults from scenario files, the ATT timeout, the link model's cap and load scenarios, through
/// the built blesim on a private bus.
@Suite("blesim: scheduled faults, ATT timeout, link model, load", .serialized)
struct ScenarioFaultsTests {
    /// Writes `text` to a fresh temporary scenario file.
    static func scenarioFile(_ name: String, _ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "blesim-\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).json"
        ).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The test fixture (Air.scenario) with a `faults` list.
    static func airWithFaults(_ faults: String) throws -> String {
        var text = try String(contentsOfFile: Air.scenario, encoding: .utf8)
        let brace = try #require(text.firstIndex(of: "{"))
        text.insert(contentsOf: "\n  \"faults\": \(faults),", at: text.index(after: brace))
        return try scenarioFile("faults", text)
    }

    @Test("a timeout fault: after the ATT timeout the client gets Failed 0x0e, then the link drops")
    func attTimeout() async throws {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(
            address: bus.address, scenario: nil, options: ["--scenario", Air.scenario, "--att-timeout", "0.5"])
        let client = try await BlueZClient.connect(bus)
        try await client.connectHRM()
        try await client.control(
            "FailNext", [.string(HRM.address), .string("2A19"), .uint32(1), .string("timeout"), .string("")])
        do {
            _ = try await client.connection.call(
                destination: "org.bluez", path: ObjectPath(HRM.batteryLevel), interface: BlueZClient.characteristic,
                member: "ReadValue", arguments: [BlueZClient.emptyOptions], timeout: .seconds(60))
            Issue.record("the read succeeded")
        } catch let error as DBusError {
            #expect(error.name.rawValue == "org.bluez.Error.Failed")
            #expect(error.message == "Operation failed with ATT error: 0x0e")
        }
        #expect(await client.log.wait { BlueZClient.changed($0, Air.hrm, "Connected", .boolean(false)) })
        #expect(try await client.property(Air.hrm, "org.bluez.Device1", "Connected") == .boolean(false))
        _ = sim
    }

    @Test("a scenario's faults: failNext from the start, dropLink after connect")
    func scheduled() async throws {
        let path = try Self.airWithFaults(
            """
            [ { "fault": "failNext", "at": 0, "device": "\(HRM.address)", "uuid": "2A19", "count": 1,
                "error": "org.bluez.Error.NotAuthorized", "message": "Operation Not Authorized" },
              { "fault": "dropLink", "after": "connect", "at": 1.5, "device": "\(HRM.address)" } ]
            """)
        defer { unlink(path) }
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(address: bus.address, scenario: nil, options: ["--scenario", path])
        let client = try await BlueZClient.connect(bus)
        try await client.connectHRM()
        #expect(
            await client.errorName { _ = try await client.read(HRM.batteryLevel) } == "org.bluez.Error.NotAuthorized")
        #expect(try await client.read(HRM.batteryLevel) == [100])
        #expect(await client.log.wait { BlueZClient.changed($0, Air.hrm, "Connected", .boolean(false)) })
        _ = sim
    }

    @Test("the link model caps notifications: at most rate x time + one over a measured window")
    func linkCap() async throws {
        let path = try Self.scenarioFile(
            "link",
            """
            { "adapters": 1, "devices": [ { "address": "D0:00:00:00:00:01", "intervalMs": 50,
              "advertising": { "name": "Fast" }, "rssi": { "distance": 1 },
              "gatt": { "services": [ { "uuid": "180D", "characteristics": [ { "uuid": "2A37", "flags": ["notify"],
                "value": "0000", "behaviour": { "counter": { "start": 0, "step": 1, "format": "uint16" }, "everyMs": 1 } } ] } ] } } ] }
            """)
        defer { unlink(path) }
        let bus = try await PrivateBus.start()
        // 100 ms, one packet per event: 10 notifications/s (1,000/s offered).
        let sim = try await BlesimProcess.start(
            address: bus.address, scenario: nil, options: ["--scenario", path, "--link", "interval=100,packets=1"])
        let client = try await BlueZClient.connect(bus)
        let device = "/org/bluez/hci0/dev_D0_00_00_00_00_01"
        let value = device + "/service000a/char000b"
        try await client.adapter("StartDiscovery")
        #expect(await client.log.wait { Signals.addedDevices($0)[device] != nil })
        _ = try await client.call(device, "org.bluez.Device1", "Connect")
        #expect(await client.log.wait { BlueZClient.changed($0, device, "ServicesResolved", .boolean(true)) })
        let start = ContinuousClock.now
        _ = try await client.call(value, BlueZClient.characteristic, "StartNotify")
        #expect(await client.log.wait { !BlueZClient.values($0, value).isEmpty })
        try await Task.sleep(for: .seconds(3))
        let count = BlueZClient.values(client.log.messages, value).count
        let elapsed = (ContinuousClock.now - start) / .seconds(1)
        // Every value counted was sent after StartNotify and before now: the budget allows 10/s
        // and the first token; +1 for rounding. Uncapped, this would be hundreds.
        #expect(Double(count) <= 10 * elapsed + 2, "\(count) notifications in \(elapsed) s")
        _ = sim
    }

    @Test("the link model paces write commands: the device has at most rate x time + one of them, then all")
    func pacedWrites() async throws {
        let path = try Self.scenarioFile(
            "writes",
            """
            { "adapters": 1, "devices": [ { "address": "D0:00:00:00:00:02", "intervalMs": 50,
              "advertising": { "name": "Sink" }, "rssi": { "distance": 1 },
              "gatt": { "services": [ { "uuid": "1234", "characteristics": [
                { "uuid": "2A00", "flags": ["read", "write-without-response"], "value": "00" } ] } ] } } ] }
            """)
        defer { unlink(path) }
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(
            address: bus.address, scenario: nil, options: ["--scenario", path, "--link", "interval=100,packets=1"])
        let client = try await BlueZClient.connect(bus)
        let device = "/org/bluez/hci0/dev_D0_00_00_00_00_02"
        let value = device + "/service000a/char000b"
        try await client.adapter("StartDiscovery")
        #expect(await client.log.wait { Signals.addedDevices($0)[device] != nil })
        _ = try await client.call(device, "org.bluez.Device1", "Connect")
        #expect(await client.log.wait { BlueZClient.changed($0, device, "ServicesResolved", .boolean(true)) })
        let start = ContinuousClock.now
        for index in 1...30 { try await client.write(value, [UInt8(index)], type: "command") }
        let written = try await client.read(value)
        let elapsed = (ContinuousClock.now - start) / .seconds(1)
        // 10 writes/s reach the device (the first at once): at most 10 x elapsed + 1, +1 for rounding.
        #expect(Double(written.first ?? 0) <= 10 * elapsed + 2, "value \(written) after \(elapsed) s")
        // None is lost: the last arrives (about 3 s after the first).
        let deadline = ContinuousClock.now + .seconds(60)
        var last = written
        while last != [30], ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
            last = try await client.read(value)
        }
        #expect(last == [30])
        _ = sim
    }

    @Test("a load scenario: 2000 devices from one template with `repeat` are all discovered")
    func load() async throws {
        let path = try Self.scenarioFile(
            "load",
            """
            { "adapters": 1, "devices": [ { "address": "C1:00:00:00:00:00", "addressType": "random", "intervalMs": 500,
              "advertising": { "name": "Tag-{n}", "serviceUUIDs": ["180F"] },
              "rssi": { "noise": 2 }, "repeat": { "count": 2000, "distance": [1, 30] } } ] }
            """)
        defer { unlink(path) }
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(address: bus.address, scenario: nil, options: ["--scenario", path])
        let connection = try await DBusConnection.connect(address: bus.address)
        let stream = try await connection.signals(
            MatchRule(sender: "org.bluez", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded"),
            buffering: .newest(1_000_000))
        _ = try await connection.call(
            destination: "org.bluez", path: ObjectPath("/org/bluez/hci0"), interface: "org.bluez.Adapter1",
            member: "StartDiscovery")
        let counter = Task { () -> Int in
            var seen = Set<String>()
            for await message in stream {
                guard case .objectPath(let path)? = try? message.arguments().first,
                    path.rawValue.hasPrefix("/org/bluez/hci0/dev_C1_00_00_00_")
                else { continue }
                seen.insert(path.rawValue)
                if seen.count == 2000 { break }
            }
            return seen.count
        }
        let deadline = Task {
            try? await Task.sleep(for: .seconds(180))
            stream.finish()
        }
        let seen = await counter.value
        deadline.cancel()
        #expect(seen == 2000)
        let objects = try await connection.call(
            destination: "org.bluez", path: ObjectPath("/"), interface: "org.freedesktop.DBus.ObjectManager",
            member: "GetManagedObjects"
        ).arguments()
        if case .dictionary(_, _, let entries)? = objects.first {
            let devices = entries.filter { entry in
                if case .objectPath(let path) = entry.key { path.rawValue.contains("/dev_C1_") } else { false }
            }
            #expect(devices.count == 2000)
        }
        _ = sim
    }
}
