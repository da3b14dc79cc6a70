import BLETesting
import DBus
import Glibc
import JSON
import Testing

/// bleagent in the peripheral role with SensorAggregator on its embedded
/// blesim, and blesim's own virtual central (`org.blesim.Control1`:
/// CentralConnect, CentralSubscribe, CentralWrite, CentralRead and the
/// Notification signal) as the client.
@Suite("SensorAggregator against blesim's virtual central", .serialized, .timeLimit(.minutes(3)))
struct SensorAggregatorVirtualCentralTests {
    static let hci0 = DBusValue.string("hci0")
    static let temperature = "00002a6e-0000-1000-8000-00805f9b34fb"
    static let summary = "07140ec1-d234-4118-a438-685945414e79"
    static let config = "07140ec2-d234-4118-a438-685945414e79"

    static func control(
        _ connection: DBusConnection, _ member: String, _ arguments: [DBusValue]
    ) async throws -> [DBusValue] {
        try await connection.call(
            destination: "org.bluez", path: ObjectPath("/org/blesim"), interface: "org.blesim.Control1",
            member: member, arguments: arguments
        ).arguments()
    }

    /// The Notification values for `uuid` until `wanted` arrives (included), or the deadline.
    static func notifications(
        _ stream: DBusSignalStream, of uuid: String, until wanted: [UInt8]
    ) async -> [[UInt8]] {
        await withTaskGroup(of: [[UInt8]]?.self) { group in
            group.addTask {
                var seen: [[UInt8]] = []
                for await signal in stream {
                    guard let arguments = try? signal.arguments(), arguments.count == 3,
                        arguments[1] == .string(uuid), let value = arguments[2].bytesValue
                    else { continue }
                    seen.append(value)
                    if value == wanted { break }
                }
                return seen
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(30))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? []
        }
    }

    /// A float32 of a Summary record (little-endian) at `offset`.
    static func float(_ bytes: [UInt8], _ offset: Int) -> Float {
        Float(bitPattern: (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) })
    }

    static func uint32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }

    @Test(
        "the virtual central subscribes to Temperature and is notified as ingest readings change, writes a valid Config (applied) and an invalid one (ATT error 0x80), reads the aggregates in the Summary, and gets a value sent with blectl update (peripheral.update)"
    )
    func virtualCentral() async throws {
        let data = makeTemporaryDirectory()
        defer { removeTree(data) }
        let ingest = "\(data)/ingest.sock"
        let sensors = """
            { "id": "room", "kind": "temperature", "source": { "type": "ingest" } },
            { "id": "hum", "kind": "humidity", "source": { "type": "ingest" } }
            """
        let agent = try await RunningAgent(
            config: SensorAgent.config(
                scenario: SensorAgent.scenario(adapters: 1, in: data), ingest: ingest, sensors: sensors))
        // The role runs once the plugin started; its services are published (and connectable) a moment later.
        #expect(await agent.child.waitForStderr(containing: "; advertising "), "\(agent.child.stderrText)")
        let status = try await SensorAgent.call(agent, "agent.status")
        #expect(status["roleState"]?["state"] == "running", "\(status)")
        let address = try #require(status["sim"]?["busAddress"]?.stringValue)
        #expect(SensorAgent.send(ingest, #"{"sensor": "room", "value": 21}"#) > 0)
        #expect(SensorAgent.send(ingest, #"{"sensor": "hum", "value": 40}"#) > 0)

        let connection = try await DBusConnection.connect(address: address)
        let signals = try await connection.signals(
            MatchRule(
                sender: "org.bluez", interface: "org.blesim.Control1", member: "Notification",
                path: try ObjectPath("/org/blesim")))
        _ = try await Self.control(connection, "CentralConnect", [Self.hci0])

        // Subscribed: the current value at once, then each change beyond notifyDelta.
        _ = try await Self.control(connection, "CentralSubscribe", [Self.hci0, .string("2a6e"), .boolean(true)])
        let first = await Self.notifications(signals, of: Self.temperature, until: [0x34, 0x08])
        #expect(first.last == [0x34, 0x08], "21.00 degC: \(first); agent log: \(agent.child.stderrText)")
        #expect(SensorAgent.send(ingest, #"{"sensor": "room", "value": 25}"#) > 0)
        let changed = await Self.notifications(signals, of: Self.temperature, until: [0xC4, 0x09])
        #expect(changed.last == [0xC4, 0x09], "25.00 degC: \(changed)")

        // Config: window 600 s, interval 5 s, sensor 0 low 5.0; then version 2, refused.
        let valid: [UInt8] = [0x01, 0x58, 0x02, 0, 0, 0x05, 0, 0x01, 0, 0, 0, 0xA0, 0x40, 0, 0, 0xC0, 0x7F]
        _ = try await Self.control(
            connection, "CentralWrite", [Self.hci0, .string(Self.config), .bytes(valid), .boolean(true)])
        let read = try await Self.control(connection, "CentralRead", [Self.hci0, .string(Self.config)])
        #expect(read.first?.bytesValue.map { Array($0.prefix(7)) } == [0x01, 0x58, 0x02, 0, 0, 0x05, 0])
        do {
            _ = try await Self.control(
                connection, "CentralWrite",
                [Self.hci0, .string(Self.config), .bytes([0x02] + valid.dropFirst()), .boolean(true)])
            Issue.record("the invalid Config was accepted")
        } catch let error as DBusError {
            #expect(error.name.rawValue == "org.bluez.Error.Failed")
            #expect(error.message == "Operation failed with ATT error: 0x80")
        }
        #expect(
            await agent.child.waitForStderr(containing: "Config write refused"),
            "the refusal's reason is logged: \(agent.child.stderrText)")

        // The Summary: both windows, 600 s now; temperature 21 and 25, humidity 40.
        let summary = try #require(
            try await Self.control(connection, "CentralRead", [Self.hci0, .string(Self.summary)]).first?.bytesValue)
        try #require(summary.count == 2 + 2 * 26, "\(summary)")
        #expect(Array(summary.prefix(2)) == [0x01, 0x02])
        let room = Array(summary[2..<28])
        #expect(Array(room.prefix(2)) == [0x00, 0x01], "sensor 0, temperature")
        #expect(Self.uint32(room, 2) == 600 && Self.uint32(room, 6) == 2, "\(room)")
        #expect(
            [Self.float(room, 10), Self.float(room, 14), Self.float(room, 18), Self.float(room, 22)]
                == [21, 25, 23, 25])
        let humidity = Array(summary[28..<54])
        #expect(Array(humidity.prefix(2)) == [0x01, 0x02], "sensor 1, humidity")
        #expect(Self.uint32(humidity, 6) == 1 && Self.float(humidity, 22) == 40, "\(humidity)")

        // peripheral.update through blectl: the subscribed virtual central gets the value.
        let update = try await blectl(["--socket", agent.socketPath, "--json", "update", "2a6e", "1122", "--hex"])
        #expect(update.stdout == #"{"notified":1,"queued":true}"# + "\n", "\(update)")
        let updated = await Self.notifications(signals, of: Self.temperature, until: [0x11, 0x22])
        #expect(updated.last == [0x11, 0x22], "\(updated)")

        _ = try await Self.control(connection, "CentralDisconnect", [Self.hci0])
        signals.finish()
        #expect(await agent.stop().status == 0)
    }
}
