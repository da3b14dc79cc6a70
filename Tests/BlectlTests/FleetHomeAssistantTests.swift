import BLETesting
import Glibc
import JSON
import Testing

/// The sensor aggregator's readings on `<prefix>/sensors/<id>` and its Home
/// Assistant discovery configs, checked field for field against Home
/// Assistant's documented MQTT sensor schema (Fixtures/home-assistant-mqtt-sensor.json).
@Suite("fleet: sensor readings and Home Assistant discovery", .serialized)
struct FleetHomeAssistantTests {
    static let schema: JSON = {
        let path = "\(repositoryRoot)/Tests/BlectlTests/Fixtures/home-assistant-mqtt-sensor.json"
        return (try? JSON(parsing: try readFileBytes(path))) ?? .null
    }()

    /// Every way `config` (published to `topic`) departs from the schema.
    static func violations(topic: String, _ config: JSON) -> [String] {
        var problems: [String] = []
        guard case .object(let object) = config else { return ["not an object"] }
        if let pattern = schema["discoveryTopic"]?.stringValue, let regex = try? Regex(pattern),
            (try? regex.wholeMatch(in: topic)) == nil
        {
            problems.append("topic \(topic) is not a discovery topic")
        }
        for required in schema["required"]?.arrayValue ?? [] where object[required.stringValue ?? ""] == nil {
            problems.append("missing \(required)")
        }
        problems += typeViolations(object, schema["fields"], path: "")
        if case .object(let device)? = object["device"] {
            problems += typeViolations(device, schema["device"], path: "device.")
            if device["identifiers"]?.arrayValue?.allSatisfy({ $0.stringValue != nil }) != true {
                problems.append("device.identifiers is not a list of strings")
            }
        }
        if let stateClass = object["state_class"], schema["stateClasses"]?.arrayValue?.contains(stateClass) != true {
            problems.append("state_class \(stateClass) is not one of Home Assistant's")
        }
        if let deviceClass = object["device_class"]?.stringValue {
            let units = schema["deviceClassUnits"]?[deviceClass]?.arrayValue ?? []
            if !units.contains(object["unit_of_measurement"] ?? .null) {
                problems.append(
                    "unit \(object["unit_of_measurement"] ?? .null) is not one of \(deviceClass)'s: \(units)")
            }
        }
        return problems
    }

    static func typeViolations(_ object: JSONObject, _ fields: JSON?, path: String) -> [String] {
        object.compactMap { key, value -> String? in
            guard let type = fields?[key]?.stringValue else { return "\(path)\(key) is not a documented field" }
            let fits: Bool
            switch (type, value) {
            case ("string", .string): fits = true
            case ("template", .string(let text)): fits = text.contains("{{") && text.contains("}}")
            case ("list", .array), ("map", .object), ("boolean", .bool), ("integer", .int): fits = true
            default: fits = false
            }
            return fits ? nil : "\(path)\(key) should be a \(type), is \(value.serialized())"
        }
    }

    /// What `{{ value_json.NAME }}` gives for `payload`.
    static func render(_ template: String?, _ payload: JSON) -> JSON? {
        guard let template, template.hasPrefix("{{ value_json."), template.hasSuffix(" }}") else { return nil }
        return payload[String(template.dropFirst("{{ value_json.".count).dropLast(3))]
    }

    static func aggregatorConfig(fleet: String) async throws -> String {
        let repository = try JSON(parsing: try readFileBytes("\(repositoryRoot)/roles.json"))
        let plugin = try #require(repository["roles"]?["peripheral"]?["config"])
        return """
            {
              "version": 1, "role": "peripheral", "backend": "sim",
              "control": { "socket": "run/control.sock" }, "restore": { "stateDirectory": "state" },
              "pluginDirectory": "\(buildDirectory)",
              "sim": { "scenario": "\(repositoryRoot)/sim/scenarios/default.json" },
              "roles": { "peripheral": { "plugin": "SensorAggregator", "config": \(plugin.serialized()) } },
              \(fleet)
            }
            """
    }

    @Test(
        "the aggregator publishes each reading to <prefix>/sensors/<id> and one retained discovery config per sensor that follows Home Assistant's schema, whose templates read the readings and the node's availability"
    )
    func discoveryFollowsSchema() async throws {
        #expect(Self.schema != .null, "the schema fixture is readable")
        // The check itself: a bad topic, a wrong type, a misspelt field, a unit the device class lacks, no identifiers.
        let wrong: JSON = ["state_topic": 1, "unit_of_measure": "C", "device_class": "temperature", "device": [:]]
        #expect(Self.violations(topic: "homeassistant/sensor/a b/config", wrong).count == 5)
        let broker = try await MosquittoBroker()
        let fleet = fleetSection(broker: broker, node: "gw-ha", extra: #""homeAssistant": { "enabled": true }"#)
        let agent = try await RunningAgent(config: try Self.aggregatorConfig(fleet: fleet))
        let status = try await broker.subscriber(["bleagent/gw-ha/status"])
        let online = try #require(
            await nextMessage(from: status, topic: "bleagent/gw-ha/status") { $0["state"] == "online" })
        // Retained: a subscriber that comes later (Home Assistant restarting) still gets every config.
        let configs = try await broker.subscriber(["homeassistant/sensor/+/config"])
        var seen: [String: JSON] = [:]
        var uniqueIDs: Set<String> = []
        let sensors = ["bat", "baro", "hum", "room"]
        let published = await messages(
            from: configs, topics: Set(sensors.map { "homeassistant/sensor/gw-ha_\($0)/config" }))
        for sensor in sensors {
            let topic = "homeassistant/sensor/gw-ha_\(sensor)/config"
            let config = try #require(published[topic], "no discovery config for \(sensor)")
            #expect(Self.violations(topic: topic, config) == [], "\(sensor): \(config.serialized())")
            #expect(config["state_topic"]?.stringValue == "bleagent/gw-ha/sensors/\(sensor)")
            #expect(config["availability_topic"] == "bleagent/gw-ha/status")
            #expect(
                Self.render(config["availability_template"]?.stringValue, online) == config["payload_available"])
            #expect(config["device"]?["identifiers"] == ["bleagent_gw-ha"])
            #expect(config["device"]?["sw_version"] == online["agent"]?["version"])
            uniqueIDs.insert(config["unique_id"]?.stringValue ?? "")
            seen[sensor] = config
        }
        #expect(uniqueIDs.count == 4)
        #expect(seen["room"]?["device_class"] == "temperature" && seen["room"]?["unit_of_measurement"] == "°C")
        #expect(seen["baro"]?["device_class"] == "pressure" && seen["baro"]?["unit_of_measurement"] == "Pa")

        let readings = try await broker.subscriber(["bleagent/gw-ha/sensors/#"])
        let room = try #require(await nextMessage(from: readings, topic: "bleagent/gw-ha/sensors/room"))
        let value = try #require(Self.render(seen["room"]?["value_template"]?.stringValue, room)?.doubleValue)
        #expect((15.0...30.0).contains(value), "the simulated room temperature: \(value)")
        let listed = try JSON(
            parsing: try await blectl(["--socket", agent.socketPath, "--json", "call", "sensors.readings"]).stdout)
        #expect(listed["sensors"]?.arrayValue?.count == 4)
        await terminate(status, configs, readings)
    }
}
