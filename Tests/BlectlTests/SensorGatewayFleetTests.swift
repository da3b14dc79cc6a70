import BLETesting
import Glibc
import IO
import JSON
import Testing

/// The sensor gateway's hand-off over MQTT: bleagent with the gateway on the
/// embedded simulator (Fixtures/sensor-gateway.json) and a fleet section on a
/// real mosquitto; mosquitto_sub sees each sensor's readings under
/// `<prefix>/sensors/<device>/<reading>`, Home Assistant discovery configs,
/// and availability going offline when a device falls silent and expires.
@Suite("SensorGateway on an MQTT broker", .serialized, .timeLimit(.minutes(3)))
struct SensorGatewayFleetTests {
    static let prefix = "bleagent/gw-mqtt"

    /// The gateway fixture with the moving thermometer silenced `seconds` after blesim starts.
    static func scenario(silencingAfter seconds: Int, in directory: String) async throws -> String {
        let fixture = try JSON(
            parsing: try readFileBytes("\(repositoryRoot)/Tests/BlectlTests/Fixtures/sensor-gateway.json"))
        guard case .object(var scenario) = fixture else { throw ChildError(description: "the fixture is no object") }
        scenario["faults"] = [["fault": "silence", "at": .int(Int64(seconds)), "device": "A4:C1:38:00:00:02"]]
        let path = "\(directory)/air.json"
        writeFile(path, JSON.object(scenario).serialized())
        return path
    }

    @Test(
        "readings retained under <prefix>/sensors/<device>/<reading>, Home Assistant configs per reading (sensor, binary_sensor) with the device's availability, offline when a device expires"
    )
    func handsOffOverMQTT() async throws {
        let broker = try await MosquittoBroker()
        let directory = SensorGatewayProcessTests.directory(keyFileMode: 0o600)
        defer { BlockingPool.shared.submit { removeTree(directory) } }
        let air = try await Self.scenario(silencingAfter: 10, in: directory)
        let fleet = fleetSection(broker: broker, node: "gw-mqtt", extra: #""homeAssistant": { "enabled": true }"#)
        let config = """
            {
              "version": 1, "role": "central", "backend": "sim",
              "control": { "socket": "run/control.sock" }, "restore": { "stateDirectory": "state" },
              "pluginDirectory": "\(buildDirectory)", "sim": { "scenario": "\(air)" },
              "roles": { "central": { "plugin": "SensorGateway",
                                      "config": { "keyFile": "bthome-keys", "eventIntervalSeconds": 1,
                                                  "expirySeconds": 4 } } },
              \(fleet)
            }
            """
        let readings = try await broker.subscriber(["\(Self.prefix)/sensors/#"])
        let configs = try await broker.subscriber(["homeassistant/+/+/config"])
        let availability = try await broker.subscriber(["\(Self.prefix)/sensors/+/availability"])
        let agent = try await RunningAgent(config: config, directory: directory)
        let socket = ["--socket", agent.socketPath]

        // The plain thermometer's three readings, each on its own topic, and the encrypted sensor's door (decrypted
        // with its bind key, a binary sensor), in whatever order they come: waiting for one after the others
        // could wait behind the moving sensor's stream for ever.
        let plain = "\(Self.prefix)/sensors/a4c138000001"
        let door = "\(Self.prefix)/sensors/5448e68f80a5/door"
        let values = await messages(
            from: readings, topics: ["\(plain)/temperature", "\(plain)/humidity", "\(plain)/battery", door])
        #expect(values["\(plain)/temperature"]?["value"] == .double(21.5), "\(values)")
        #expect(values["\(plain)/humidity"]?["value"] == .double(45.25))
        #expect(values["\(plain)/battery"]?["value"] == .double(87))
        #expect((values["\(plain)/temperature"]?["time"]?.doubleValue ?? 0) > 1_700_000_000)
        #expect(values[door]?["value"] == true)

        // Home Assistant discovery: one config per reading, each a valid MQTT sensor, on the device it belongs to.
        let sensorTopic = "homeassistant/sensor/gw-mqtt_a4c138000001_temperature/config"
        let doorTopic = "homeassistant/binary_sensor/gw-mqtt_5448e68f80a5_door/config"
        let announced = await messages(
            from: configs,
            topics: [
                sensorTopic, doorTopic, "homeassistant/sensor/gw-mqtt_a4c138000001_humidity/config",
                "homeassistant/sensor/gw-mqtt_a4c138000001_battery/config",
            ])
        for (topic, config) in announced where topic.contains("/sensor/") {
            #expect(FleetHomeAssistantTests.violations(topic: topic, config) == [], "\(topic): \(config)")
        }
        let temperature = try #require(announced[sensorTopic])
        #expect(temperature["state_topic"]?.stringValue == "\(plain)/temperature")
        #expect(temperature["device_class"] == "temperature" && temperature["unit_of_measurement"] == "°C")
        #expect(temperature["state_class"] == "measurement")
        #expect(
            FleetHomeAssistantTests.render(
                temperature["value_template"]?.stringValue, values["\(plain)/temperature"] ?? .null) == .double(21.5))
        #expect(temperature["device"]?["connections"] == [["bluetooth", "a4:c1:38:00:00:01"]])
        #expect(temperature["device"]?["name"] == "ATC_000001")
        #expect(temperature["device"]?["via_device"] == "bleagent_gw-mqtt")
        #expect(temperature["availability_mode"] == "all")
        #expect(
            temperature["availability"]?.arrayValue?.compactMap { $0["topic"]?.stringValue } == [
                "\(Self.prefix)/status", "\(plain)/availability",
            ])
        let doorConfig = try #require(announced[doorTopic])
        #expect(doorConfig["device_class"] == "door")
        #expect(doorConfig["value_template"] == "{{ 'ON' if value_json.value else 'OFF' }}")
        #expect(doorConfig["state_topic"]?.stringValue == door)

        // States and configs are retained: a subscriber coming later (Home Assistant restarting) gets them.
        let late = try await broker.subscriber(["\(plain)/temperature", sensorTopic], extra: ["--retained-only"])
        let kept = await messages(from: late, topics: ["\(plain)/temperature", sensorTopic])
        #expect(kept["\(plain)/temperature"]?["value"] == .double(21.5))
        #expect(kept[sensorTopic]?["unique_id"] == "bleagent_gw-mqtt_a4c138000001_temperature")

        // The moving thermometer is online, then falls silent (the scenario's fault) and expires: offline.
        let moving = "\(Self.prefix)/sensors/a4c138000002/availability"
        #expect(await availability.waitForStdoutLine { $0 == "\(moving) online" } != nil)
        #expect(await availability.waitForStdoutLine { $0 == "\(moving) offline" } != nil)

        let status = try JSON(parsing: try await blectl(socket + ["--json", "call", "fleet.status"]).stdout)
        let devices = status["devices"]
        #expect((devices?["published"]?.intValue ?? 0) > 0, "\(status)")
        #expect((devices?["departed"]?.intValue ?? 0) >= 1, "\(status)")
        #expect(devices?["dropped"] == 0)
        let table = try await blectl(socket + ["fleet", "status"])
        #expect(table.stdout.contains(" relayed, "), "\(table.stdout)")
        await terminate(readings, configs, availability, late)
        #expect(await agent.stop().status == 0)
    }
}
