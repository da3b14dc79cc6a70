import GATT
import SimCore
import Testing

/// Faults a scenario schedules (`faults`), the ATT timeout, and their parse errors.
@Suite("scheduled faults and the ATT timeout")
struct ScheduledFaultsTests {
    static let device = DeviceAddress(validBytes: (0xC0, 0, 0, 0, 0, 1))

    static func scenario(faults: String) -> String {
        """
        { "devices": [
          { "address": "C0:00:00:00:00:01", "intervalMs": 20, "rssi": { "distance": 1 },
            "gatt": { "services": [ { "uuid": "180F", "characteristics": [
              { "uuid": "2A19", "flags": ["read", "notify"], "value": "64",
                "behaviour": { "cycle": ["01", "02"], "everyMs": 1 } } ] } ] } } ],
          "faults": \(faults) }
        """
    }

    /// A world that discovered and connected the device at t = 0.1 s.
    static func connected(_ text: String) throws -> SimWorld {
        var world = SimWorld(scenario: try Scenario.parse(text))
        _ = try world.withAdapter(0) { adapter throws(BlueZError) in try adapter.startDiscovery(owner: ":1.1") }
        _ = world.advance(to: .seconds(0.1))
        _ = try world.beginConnect(adapter: 0, address: device, at: .seconds(0.1))
        _ = world.completeConnect(adapter: 0, address: device)
        _ = world.resolveServices(adapter: 0, address: device)
        return world
    }

    static func connectedNow(_ world: SimWorld) -> Bool { world.adapters[0].devices[device]?.connected == true }

    @Test("a fault `after: connect` happens that long after each connection, not before")
    func afterConnect() throws {
        var world = try Self.connected(
            Self.scenario(
                faults: #"[ { "fault": "dropLink", "device": "C0:00:00:00:00:01", "after": "connect", "at": 0.5 } ]"#))
        _ = world.advance(to: .seconds(0.55))
        #expect(Self.connectedNow(world))
        let events = world.advance(to: .seconds(0.65)).flatMap(\.events)
        #expect(
            events.contains(
                .deviceChanged(Self.device, changed: [Property("Connected", .bool(false))], invalidated: [])))
        #expect(!Self.connectedNow(world))
        // Reconnecting schedules it again.
        _ = try world.beginConnect(adapter: 0, address: Self.device, at: .seconds(1))
        _ = world.advance(to: .seconds(1))
        _ = world.completeConnect(adapter: 0, address: Self.device)
        _ = world.advance(to: .seconds(1.4))
        #expect(Self.connectedNow(world))
        _ = world.advance(to: .seconds(1.6))
        #expect(!Self.connectedNow(world))
    }

    @Test("faults at times from the start: failNext, delay, silence, powerCycle (off, then on after `seconds`)")
    func fromStart() throws {
        let text = Self.scenario(
            faults: """
                [ { "fault": "failNext", "device": "C0:00:00:00:00:01", "uuid": "2A19", "count": 2,
                    "error": "org.bluez.Error.NotAuthorized", "message": "Operation Not Authorized", "at": 1 },
                  { "fault": "delay", "device": "C0:00:00:00:00:01", "seconds": 0.25, "at": 1 },
                  { "fault": "silence", "device": "C0:00:00:00:00:01", "at": 2 },
                  { "fault": "powerCycle", "adapter": 0, "at": 3, "seconds": 0.5 } ]
                """)
        let scenario = try Scenario.parse(text)
        #expect(scenario.faults.count == 5)
        var world = try Self.connected(text)
        #expect(world.faults == FaultPlan())
        _ = world.advance(to: .seconds(1))
        #expect(world.faults.rules.first?.remaining == 2)
        #expect(world.faults.delay(for: Self.device) == 0.25)
        #expect(world.silenced.isEmpty)
        _ = world.advance(to: .seconds(2))
        #expect(world.silenced == [0])
        _ = world.advance(to: .seconds(3.1))
        #expect(!world.adapters[0].powered)
        #expect(!Self.connectedNow(world))
        #expect(world.nextDeadline != nil)
        _ = world.advance(to: .seconds(3.6))
        #expect(world.adapters[0].powered)
    }

    @Test(
        "bad fault entries name the field",
        arguments: [
            (#"[ { "fault": "explode", "at": 1 } ]"#, "faults[0].fault"),
            (#"[ { "fault": "dropLink", "at": 1 } ]"#, "faults[0].device"),
            (#"[ { "fault": "dropLink", "device": "C0:00:00:00:00:09" } ]"#, "faults[0].device"),
            (#"[ { "fault": "dropLink", "device": "C0:00:00:00:00:01", "at": -1 } ]"#, "faults[0].at"),
            (#"[ { "fault": "dropLink", "device": "C0:00:00:00:00:01", "after": "lunch" } ]"#, "faults[0].after"),
            (#"[ { "fault": "failNext", "device": "C0:00:00:00:00:01" } ]"#, "faults[0].error"),
            (#"[ { "fault": "failNext", "device": "C0:00:00:00:00:01", "error": "nope" } ]"#, "faults[0].error"),
            (#"[ { "fault": "powerCycle", "adapter": 3 } ]"#, "faults[0].adapter"),
            (#"[ { "fault": "move", "device": "C0:00:00:00:00:01", "seconds": 1 } ]"#, "faults[0].seconds"),
            (#"[ { "fault": "clear" }, { "fault": "delay", "device": "C0:00:00:00:00:01" } ]"#, "faults[1].seconds"),
        ])
    func badFaults(faults: String, path: String) {
        #expect {
            _ = try Scenario.parse(Self.scenario(faults: faults))
        } throws: { error in
            (error as? ScenarioError)?.path == path
        }
    }

    @Test("an ATT timeout fails the request with Failed 0x0e (att.c, gatt-client.c) and drops the link")
    func attTimeout() throws {
        var world = try Self.connected(Self.scenario(faults: "[]"))
        #expect(world.attTimeout == 30)
        world.faults.rules.append(FaultPlan.Rule(address: Self.device, remaining: 1, action: .timeout))
        let path = "/org/bluez/hci0/dev_C0_00_00_00_00_01/service000a/char000b"
        let operation = try world.beginRead(path: path, offset: 0)
        #expect(operation.timesOut)
        let (error, batches) = world.attTimedOut(operation)
        #expect(error == BlueZError(.failed, "Operation failed with ATT error: 0x0e"))
        let events = batches.flatMap(\.events)
        #expect(
            events.last == .deviceChanged(Self.device, changed: [Property("Connected", .bool(false))], invalidated: []))
        #expect(
            events.contains(
                .deviceChanged(Self.device, changed: [Property("ServicesResolved", .bool(false))], invalidated: [])))
        #expect(throws: BluetoothdError.failed("Not connected")) { _ = try world.beginRead(path: path, offset: 0) }
    }

    @Test("a write command takes no fault: bluetoothd answers it at once")
    func commandTakesNoFault() throws {
        let text = """
            { "devices": [ { "address": "C0:00:00:00:00:01", "rssi": { "distance": 1 },
              "gatt": { "services": [ { "uuid": "1234", "characteristics": [
                { "uuid": "2A00", "flags": ["write-without-response", "write"] } ] } ] } } ] }
            """
        var world = try Self.connected(text)
        world.faults.rules.append(FaultPlan.Rule(address: Self.device, remaining: 1, action: .timeout))
        let path = "/org/bluez/hci0/dev_C0_00_00_00_00_01/service000a/char000b"
        let command = try world.beginWrite(path: path, value: [1], offset: 0, type: "command")
        #expect(!command.timesOut)
        let request = try world.beginWrite(path: path, value: [1], offset: 0, type: "request")
        #expect(request.timesOut)
    }

    @Test("scenario attTimeout and --att-timeout set the timeout")
    func timeoutOptions() throws {
        #expect(try Scenario.parse(#"{ "attTimeout": 0.5 }"#).attTimeout == 0.5)
        let options = try SimOptions.parse(["--att-timeout", "2"])
        #expect(options.applied(to: try Scenario.parse("{}")).attTimeout == 2)
        #expect(throws: SimOptions.UsageError.self) { try SimOptions.parse(["--att-timeout", "-1"]) }
    }
}
