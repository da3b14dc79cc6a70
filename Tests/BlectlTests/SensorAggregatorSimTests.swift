import BLE
import BLETesting
import BlueZ
import DBus
import GATT
import Glibc
import JSON
import Testing

/// bleagent in the peripheral role with SensorAggregator on its embedded
/// blesim (two adapters: the agent on hci0), and a CentralManager of this
/// test on hci1 of the same blesim: the air, the GATT server and the
/// notifications all go through blesim's local GATT server and advertising
/// manager.
@Suite("SensorAggregator on the embedded simulator", .serialized, .timeLimit(.minutes(3)))
struct SensorAggregatorSimTests {
    let bthome = BluetoothUUID(uuid16: 0xFCD2)
    let configUUID = BluetoothUUID(high: 0x0714_0EC2_D234_4118, low: 0xA438_6859_4541_4E79)

    func agentConfig(scenario: String, data: String) -> String {
        """
        {
          "version": 1, "role": "peripheral", "backend": "sim",
          "control": { "socket": "run/control.sock" }, "restore": { "stateDirectory": "state" },
          "pluginDirectory": "\(buildDirectory)", "sim": { "scenario": "\(scenario)" },
          "roles": { "peripheral": { "plugin": "SensorAggregator", "config": {
            "sensors": [
              { "id": "room", "kind": "temperature", "notifyDelta": 0.5,
                "source": { "type": "file", "path": "\(data)/temp", "scale": 0.01, "pollSeconds": 0.2 } },
              { "id": "hum", "kind": "humidity", "source": { "type": "simulated", "waveform": "constant", "base": 46.65 } },
              { "id": "baro", "kind": "pressure", "source": { "type": "simulated", "waveform": "constant", "base": 101317 } },
              { "id": "bat", "kind": "battery", "source": { "type": "simulated", "waveform": "constant", "base": 87 } }
            ],
            "ingest": { "socketPath": "\(data)/ingest.sock" },
            "notification": { "intervalSeconds": 1 }, "advertising": { "localName": "gw-1" }
          } } }
        }
        """
    }

    /// The values `stream` yields until `wanted` (included) or `limit` passes.
    static func values(
        of stream: NotificationStream, until wanted: [UInt8], within limit: Duration
    ) async -> [[UInt8]] {
        await withTaskGroup(of: [[UInt8]]?.self) { group in
            group.addTask {
                var seen: [[UInt8]] = []
                for await value in stream {
                    seen.append(value)
                    if value == wanted { break }
                }
                return seen
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? []
        }
    }

    @Test(
        "a central on hci1 hears the BTHome advertisement (decodes to the fixture), connects, reads Temperature, gets notifications as the reading changes, writes a valid and an invalid Config"
    )
    func centralOnTheSameAir() async throws {
        let data = makeTemporaryDirectory()
        defer { removeTree(data) }
        writeFile("\(data)/temp", "2314\n")
        let agent = try await RunningAgent(
            config: agentConfig(scenario: SensorAgent.twoAdapterScenario(in: data), data: data))
        let socket = ["--socket", agent.socketPath]
        let status = try JSON(parsing: try await blectl(socket + ["--json", "status"]).stdout)
        #expect(status["roleState"]?["state"] == "running", "\(status)")
        let address = try #require(status["sim"]?["busAddress"]?.stringValue)

        let connection = try await DBusConnection.connect(address: address)
        let central = CentralManager(
            // StartNotify, not AcquireNotify: each value arrives as a PropertiesChanged signal.
            backend: try await BlueZCentralBackend(
                connection: connection, options: BlueZCentralBackend.Options(acquireNotify: false)),
            options: CentralManager.Options(adapter: "hci1"))
        for await state in central.stateUpdates() where state == .poweredOn { break }

        // The advertisement, once re-planned with the readings: the docs' BTHome fixture.
        let expected: [UInt8] = [0x40, 0x01, 0x57, 0x02, 0x0A, 0x09, 0x03, 0x39, 0x12, 0x04, 0xC5, 0x8B, 0x01]
        var heard: Discovery?
        for await found in try central.scanForPeripherals(withServices: [.environmentalSensing])
        where found.advertisement.serviceData[bthome] == expected {
            heard = found
            break
        }
        let found = try #require(heard)
        #expect(found.name == "gw-1")
        central.stopScan()

        let node = try #require(central.retrievePeripherals(withIdentifiers: [found.identifier]).first)
        try await central.connect(node)
        let ess = try #require(try await node.discoverServices([.environmentalSensing]).first)
        let temperature = try #require(try await node.discoverCharacteristics([.temperature], for: ess).first)
        #expect(try await node.readValue(for: temperature) == [0x0A, 0x09], "23.14 degC")

        // Notifications as the reading changes (the file the agent polls).
        let updates = node.notifications(for: temperature)
        try await node.setNotifyValue(true, for: temperature)
        writeFile("\(data)/temp", "2500\n")
        let received = await Self.values(of: updates, until: [0xC4, 0x09], within: .seconds(30))
        #expect(
            received.last == [0xC4, 0x09], "25.00 degC notified: \(received); agent log: \(agent.child.stderrText)")

        // Config: a valid write applies; version 2 is refused with application error 0x80.
        let aggregates = try #require(
            try await node.discoverServices().first {
                $0.uuid == BluetoothUUID(high: 0x0714_0EC0_D234_4118, low: 0xA438_6859_4541_4E79)
            })
        let config = try #require(try await node.discoverCharacteristics([configUUID], for: aggregates).first)
        let valid: [UInt8] = [0x01, 0x58, 0x02, 0, 0, 0x05, 0, 0x01, 0, 0, 0, 0xA0, 0x40, 0, 0, 0xC0, 0x7F]
        try await node.writeValue(valid, for: config, type: .withResponse)
        #expect(try await node.readValue(for: config).prefix(7) == [0x01, 0x58, 0x02, 0, 0, 0x05, 0])
        do {
            try await node.writeValue([0x02] + valid.dropFirst(), for: config, type: .withResponse)
            Issue.record("the invalid Config was accepted")
        } catch {
            #expect("\(error)".contains("0x80"), "\(error)")
        }
        let readings = try JSON(parsing: try await blectl(socket + ["--json", "call", "sensors.readings"]).stdout)
        #expect(readings["windowSeconds"]?.intValue == 600, "\(readings)")
        try await central.cancelConnection(node)
        _ = await agent.stop()
    }

    @Test(
        "blectl shows each central's subscriptions, whole: none before, then Temperature and Humidity of the central on hci1 (an unidentified central on BlueZ, MTU 23)"
    )
    func subscriptionsShownByBlectl() async throws {
        let data = makeTemporaryDirectory()
        defer { removeTree(data) }
        let ingest = "\(data)/ingest.sock"
        // No battery sensor: no Battery service, whose Battery Level a BlueZ central may subscribe to by itself.
        let sensors = """
            { "id": "room", "kind": "temperature", "source": { "type": "ingest" } },
            { "id": "hum", "kind": "humidity", "source": { "type": "ingest" } }
            """
        let agent = try await RunningAgent(
            config: SensorAgent.config(
                scenario: SensorAgent.twoAdapterScenario(in: data), ingest: ingest, sensors: sensors))
        SensorAgent.send(ingest, #"{"sensor": "room", "value": 21}"#)
        SensorAgent.send(ingest, #"{"sensor": "hum", "value": 40}"#)
        let socket = ["--socket", agent.socketPath]
        let status = try await SensorAgent.call(agent, "agent.status")
        let address = try #require(status["sim"]?["busAddress"]?.stringValue)
        let connection = try await DBusConnection.connect(address: address)
        let central = CentralManager(
            backend: try await BlueZCentralBackend(
                connection: connection, options: BlueZCentralBackend.Options(acquireNotify: false)),
            options: CentralManager.Options(adapter: "hci1"))
        for await state in central.stateUpdates() where state == .poweredOn { break }
        var heard: Discovery?
        for await found in try central.scanForPeripherals(withServices: [.environmentalSensing]) {
            heard = found
            break
        }
        central.stopScan()
        let found = try #require(heard)
        let node = try #require(central.retrievePeripherals(withIdentifiers: [found.identifier]).first)
        try await central.connect(node)
        let ess = try #require(try await node.discoverServices([.environmentalSensing]).first)
        let characteristics = try await node.discoverCharacteristics([.temperature, .humidity], for: ess)
        let temperature = try #require(characteristics.first { $0.uuid == .temperature })
        let humidity = try #require(characteristics.first { $0.uuid == .humidity })

        func cell(_ text: String) -> String { text + String(repeating: " ", count: 38 - text.count) }
        #expect(try await blectl(socket + ["subscribers"]).stdout == "CENTRAL  CHARACTERISTIC  MTU\n")

        // Each subscription is known to the agent once its current value arrives (sent at once on subscribing).
        let temperatures = node.notifications(for: temperature)
        try await node.setNotifyValue(true, for: temperature)
        let first = await Self.values(of: temperatures, until: [0x34, 0x08], within: .seconds(30))
        #expect(first.last == [0x34, 0x08], "21.00 degC at once: \(first)")
        let humidities = node.notifications(for: humidity)
        try await node.setNotifyValue(true, for: humidity)
        let second = await Self.values(of: humidities, until: [0xA0, 0x0F], within: .seconds(30))
        #expect(second.last == [0xA0, 0x0F], "40.00 % at once: \(second)")

        // bluetoothd's StartNotify names no central and no MTU: one unidentified central per adapter (hci0 is
        // 00:AA:01:00:00:00 in blesim), MTU the ATT minimum (docs/bluez-peripheral.md).
        let id = BlueZPeripheralBackend.unidentifiedCentral(adapterAddress: "00:AA:01:00:00:00").uuidString
        let subscribers = try await blectl(socket + ["subscribers"])
        #expect(
            subscribers.stdout
                == cell("CENTRAL") + cell("CHARACTERISTIC") + "MTU\n"
                + cell(id) + cell(BluetoothUUID.temperature.uuidString) + "23\n"
                + cell(id) + cell(BluetoothUUID.humidity.uuidString) + "23\n", "\(subscribers)")
        let subscriptions = try await blectl(socket + ["--json", "call", "sensors.subscriptions"])
        #expect(
            subscriptions.stdout == #"{"centrals":[{"central":""# + id
                + #"","mtu":23,"blocked":false,"dropped":0,"characteristics":["00002a6e-0000-1000-8000-00805f9b34fb","00002a6f-0000-1000-8000-00805f9b34fb"]}],"#
                + #""note":"bluetoothd does not say which central subscribed (docs/bluez-peripheral.md): on BlueZ all subscribers of an adapter appear as one unidentified central"}"#
                + "\n", "\(subscriptions)")
        try await central.cancelConnection(node)
        #expect(await agent.stop().status == 0)
    }

    /// `dbus-send` on the simulator's bus; its output.
    static func dbusSend(_ bus: String, _ arguments: [String]) async throws -> String {
        let result = try await Child(
            "/usr/bin/dbus-send", ["--bus=\(bus)", "--print-reply", "--dest=org.bluez", "/org/bluez/hci0"] + arguments
        ).finish()
        return result.stdout
    }

    static func activeInstances(_ bus: String) async throws -> String {
        try await dbusSend(
            bus,
            [
                "org.freedesktop.DBus.Properties.Get", "string:org.bluez.LEAdvertisingManager1",
                "string:ActiveInstances",
            ])
    }

    static func setPowered(_ bus: String, _ on: Bool) async throws {
        _ = try await dbusSend(
            bus,
            [
                "org.freedesktop.DBus.Properties.Set", "string:org.bluez.Adapter1", "string:Powered",
                "variant:boolean:\(on)",
            ])
    }

    /// Asks `condition` again every 100 ms (suspended, never blocking a thread) until it holds or 30 s pass: the
    /// advertisement registry has no signal to wait on.
    static func eventually(_ condition: () async throws -> Bool) async rethrows -> Bool {
        for _ in 0..<300 {
            if try await condition() { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    @Test(
        "an advertisement update while the adapter is off waits for poweredOn and is registered then (in the VM a BTHome update during a bluetoothd restart lost the advertisement)"
    )
    func advertisementUpdateWhileOff() async throws {
        let data = makeTemporaryDirectory()
        defer { removeTree(data) }
        writeFile("\(data)/temp", "2314\n")
        let agent = try await RunningAgent(
            config: agentConfig(scenario: SensorAgent.twoAdapterScenario(in: data), data: data))
        let socket = ["--socket", agent.socketPath]
        let status = try JSON(parsing: try await blectl(socket + ["--json", "status"]).stdout)
        let bus = try #require(status["sim"]?["busAddress"]?.stringValue)
        #expect(
            try await Self.eventually { try await Self.activeInstances(bus).contains("byte 1") }, "advertising at start"
        )

        let states = try await Child("\(buildDirectory)/blectl", socket + ["--json", "events", "--kind", "state"])
        #expect(await states.waitForStderr(containing: "streaming events"))
        try await Self.setPowered(bus, false)
        #expect(await states.waitForStdout(containing: #""bleState":"poweredOff""#))
        writeFile("\(data)/temp", "2500\n")  // a new reading: a new BTHome advertisement is planned
        // The plugin holds the update: seen poweredOff first, or told so by a registration that failed on the way.
        let held = await agent.child.process.process.standardError?.wait(timeout: testDeadline) { bytes in
            let log = String(decoding: bytes, as: UTF8.self)
            return log.contains("advertisement update waits for poweredOn")
                || log.contains("cannot advertise (retried at the next poweredOn)")
        }
        #expect(held == true, "agent log: \(agent.child.stderrText)")
        try await Self.setPowered(bus, true)
        #expect(
            try await Self.eventually { try await Self.activeInstances(bus).contains("byte 1") },
            "advertising again after power-on; agent log: \(agent.child.stderrText)")
        states.signal(SIGKILL)
        _ = await states.finish()
        #expect(await agent.stop().status == 0)
    }
}
