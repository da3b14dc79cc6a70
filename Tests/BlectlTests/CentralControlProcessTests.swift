import BLETesting
import Glibc
import JSON
import Testing

/// The central.* methods that change a device (write, subscribe,
/// unsubscribe) and the connected, disconnected and value events, through
/// `blectl` against bleagent on its embedded blesim: one device with a
/// readable and writable characteristic and a notifying one.
@Suite("bleagent's central control methods on the embedded simulator", .serialized, .timeLimit(.minutes(3)))
struct CentralControlProcessTests {
    static let scenario = """
        {
          "description": "one device for the central control methods", "seed": 5, "adapters": 1,
          "devices": [ {
            "address": "C0:00:00:00:00:E1", "addressType": "random", "intervalMs": 50,
            "advertising": { "name": "Echo-1", "serviceUUIDs": ["12345678-1234-5678-1234-56789abcde00"] },
            "rssi": { "distance": 1 },
            "gatt": { "services": [ {
              "uuid": "12345678-1234-5678-1234-56789abcde00",
              "characteristics": [
                { "uuid": "12345678-1234-5678-1234-56789abcde01",
                  "flags": ["read", "write", "write-without-response"], "value": "00" },
                { "uuid": "12345678-1234-5678-1234-56789abcde02", "flags": ["notify"], "value": "01",
                  "behaviour": { "cycle": ["01", "02", "03"], "everyMs": 200 } }
              ] } ] }
          } ]
        }
        """
    static let echo = "12345678-1234-5678-1234-56789abcde01"
    static let ticker = "12345678-1234-5678-1234-56789abcde02"

    /// The objects blesim serves on the agent's private bus (GetManagedObjects through busctl).
    static func managedObjects(bus: String) async throws -> JSONObject {
        let child = try await Child(
            "/usr/bin/busctl",
            [
                "--address=\(bus)", "--json=short", "call", "org.bluez", "/", "org.freedesktop.DBus.ObjectManager",
                "GetManagedObjects",
            ])
        let result = await child.finish()
        return try JSON(parsing: result.stdout)["data"]?.arrayValue?.first?.objectValue ?? [:]
    }

    /// The property `name` of the first object whose `interface` has `key` == `value`.
    static func property(
        _ name: String, of interface: String, where key: String, is value: String, bus: String
    ) async throws -> JSON? {
        for (_, interfaces) in try await managedObjects(bus: bus) {
            guard let properties = interfaces[interface], properties[key]?["data"]?.stringValue == value else {
                continue
            }
            return properties[name]?["data"]
        }
        return nil
    }

    /// Whether a client gets the characteristic's notifications: Notifying (StartNotify) or NotifyAcquired
    /// (AcquireNotify, which the agent's central backend prefers).
    static func notifying(_ uuid: String, bus: String) async throws -> Bool? {
        let characteristic = "org.bluez.GattCharacteristic1"
        guard
            let started = try await property("Notifying", of: characteristic, where: "UUID", is: uuid, bus: bus)?
                .boolValue
        else { return nil }
        let acquired = try await property("NotifyAcquired", of: characteristic, where: "UUID", is: uuid, bus: bus)?
            .boolValue
        return started || acquired == true
    }

    static func connected(bus: String) async throws -> Bool? {
        try await property("Connected", of: "org.bluez.Device1", where: "Address", is: "C0:00:00:00:00:E1", bus: bus)?
            .boolValue
    }

    @Test(
        "connect, write (UTF-8, and hex without response) and read back, blectl subscribe streams values, central.unsubscribe ends the notifications, disconnect; connected, value, disconnected and BLE state events; a switch away from central closes its links"
    )
    func writeSubscribeUnsubscribe() async throws {
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }
        writeFile("\(directory)/echo.json", Self.scenario)
        let config = RunningAgent.config(role: "central", plugins: ("Diagnostics", "Diagnostics"))
            .replacing("\(repositoryRoot)/sim/scenarios/default.json", with: "\(directory)/echo.json")
        let agent = try await RunningAgent(config: config)
        let socket = ["--socket", agent.socketPath]
        let status = try JSON(parsing: try await blectl(socket + ["--json", "status"]).stdout)
        #expect(status["roleState"]?["state"] == "running", "\(status)")
        let bus = try #require(status["sim"]?["busAddress"]?.stringValue)

        let events = try await Child(
            "\(buildDirectory)/blectl",
            socket + [
                "--json", "events", "--kind", "discovered", "--kind", "connected", "--kind", "disconnected", "--kind",
                "value",
            ])
        defer {
            events.signal(SIGKILL)
        }
        #expect(await events.waitForStderr(containing: "streaming events"))
        #expect(try await blectl(socket + ["scan", "start"]).stdout == "scanning\n")
        let discovered = try #require(
            await events.waitForStdoutLine { $0.contains(#""kind":"discovered""#) && $0.contains("Echo-1") })
        let id = try #require(try JSON(parsing: discovered)["data"]?["id"]?.stringValue)
        #expect(try await blectl(socket + ["scan", "stop"]).stdout == "scan stopped\n")

        #expect(try await blectl(socket + ["connect", id]).stdout == "connected to \(id)\n")
        let connected = await events.waitForStdoutLine { $0.contains(#""kind":"connected""#) }
        #expect(connected.flatMap { try? JSON(parsing: $0) }?["data"] == ["id": .string(id)], "\(connected ?? "")")

        // Writes reach the device: read back what was written.
        let write = try await blectl(socket + ["write", id, Self.echo, "hello"])
        #expect(write.status == 0 && write.stdout == "written\n", "\(write)")
        #expect(try await blectl(socket + ["read", id, Self.echo]).stdout == "68656c6c6f\n")
        let raw = try await blectl(socket + ["--json", "write", id, Self.echo, "0a:1b", "--hex", "--without-response"])
        #expect(raw.stdout == #"{"written":2}"# + "\n", "\(raw)")
        // A write command has no answer: the read that follows it on the same link sees it.
        #expect(try await blectl(socket + ["read", id, Self.echo]).stdout == "0a1b\n")

        // blectl subscribe streams the values until interrupted; the events stream sees them too.
        let subscribe = try await Child("\(buildDirectory)/blectl", socket + ["subscribe", id, Self.ticker])
        var streamed: Set<String> = []
        var lines: [String] = []
        while streamed.count < 2 && lines.count < 20, let line = await subscribe.waitForStdoutLine(where: { _ in true })
        {
            lines.append(line)
            guard line.hasPrefix("value {"), let value = try? JSON(parsing: String(line.dropFirst("value ".count)))
            else { continue }
            #expect(value["id"]?.stringValue == id && value["characteristic"]?.stringValue == Self.ticker, "\(line)")
            streamed.insert(value["value"]?.stringValue ?? "")
        }
        #expect(streamed.count == 2, "\(lines)")
        #expect(streamed.isSubset(of: ["01", "02", "03"]), "\(streamed)")
        let event = await events.waitForStdoutLine { $0.contains(#""kind":"value""#) }
        #expect(event?.contains(#""characteristic":"\#(Self.ticker)""#) == true, "\(event ?? "")")
        #expect(try await Self.notifying(Self.ticker, bus: bus) == true)
        // Interrupted as a person would (Ctrl-C): the stream ends there.
        kill(subscribe.pid, SIGINT)
        #expect(await subscribe.finish().status == 128 + SIGINT)

        // central.unsubscribe turns the device's notifications off (bluetoothd's Notifying, on the bus).
        let unsubscribe = try await blectl(
            socket + [
                "--json", "call", "central.unsubscribe", #"{"id":"\#(id)","characteristic":"\#(Self.ticker)"}"#,
            ])
        #expect(unsubscribe.stdout == #"{"notifying":false}"# + "\n", "\(unsubscribe)")
        #expect(try await Self.notifying(Self.ticker, bus: bus) == false)

        #expect(try await blectl(socket + ["disconnect", id]).stdout == "disconnected from \(id)\n")
        let disconnected = await events.waitForStdoutLine { $0.contains(#""kind":"disconnected""#) }
        #expect(
            disconnected.flatMap { try? JSON(parsing: $0) }?["data"] == ["id": .string(id), "error": .null],
            "\(disconnected ?? "")")
        #expect(try await Self.connected(bus: bus) == false)

        // BLE state events: the adapter powered off and on again (blesim's PowerCycle).
        let states = try await Child(
            "\(buildDirectory)/blectl", socket + ["--json", "events", "--kind", "state"])
        defer {
            states.signal(SIGKILL)
        }
        #expect(await states.waitForStderr(containing: "streaming events"))
        let cycle = try await Child(
            "/usr/bin/busctl",
            ["--address=\(bus)", "call", "org.bluez", "/org/blesim", "org.blesim.Control1", "PowerCycle", "u", "0"]
        ).finish()
        #expect(cycle.status == 0, "\(cycle)")
        for ble in ["poweredOff", "poweredOn"] {
            let line = await states.waitForStdoutLine { $0.contains(#""bleState":"\#(ble)""#) }
            #expect(
                line.flatMap { try? JSON(parsing: $0) }?["data"]
                    == ["agentState": "ble", "role": "central", "bleState": .string(ble)], "\(line ?? "")")
        }

        // Stopping the central role closes its links: connected again, then a switch to the peripheral role
        // (the embedded blesim stays; bluetoothd, like blesim, keeps a link when the client that asked leaves).
        #expect(try await blectl(socket + ["connect", id]).stdout == "connected to \(id)\n")
        #expect(try await Self.connected(bus: bus) == true)
        writeFile(agent.configPath, config.replacing(#""role": "central""#, with: #""role": "peripheral""#))
        agent.signal(SIGHUP)
        #expect(await agent.notify.next()?.hasPrefix("RELOADING=1\n") == true)
        #expect(await agent.notify.next() == "READY=1\nSTATUS=peripheral role running (config \(agent.configPath))")
        #expect(try await Self.connected(bus: bus) == false, "the central role's stop disconnected the device")
        #expect(await agent.stop().status == 0)
    }
}
