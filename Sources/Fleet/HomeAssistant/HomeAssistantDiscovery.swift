import JSON
import RoleKit

/// Home Assistant MQTT discovery for a node's sensors: one retained config
/// per sensor at `<discovery prefix>/sensor/<node>_<id>/config` (or
/// `.../sensor/<node>/<node>_<id>/config`, which an ACL can confine), in the
/// fields of Home Assistant's MQTT sensor (state topic, device class, state
/// class, unit, availability, device). The state is read from the reading's
/// JSON (`{"value": 21.5, "time": ...}`) and availability from the node's
/// status (`{"state": "online"}`), as Zigbee2MQTT does.
struct HomeAssistantDiscovery: Sendable, Hashable {
    /// Home Assistant's discovery prefix (`homeassistant`).
    var discoveryPrefix: String
    /// The node id.
    var node: String
    /// The node's topics.
    var topics: FleetTopics
    /// The agent's version (`sw_version`).
    var softwareVersion: String
    /// The role the node runs (in the device's model).
    var role: String
    /// Whether the node is a topic level of its own (`sensor/<node>/<id>/config`).
    var nodeTopicLevel = false

    /// The object id: `<node>_<sensor>` with anything outside `A-Z a-z 0-9 _ -` made `_`.
    func objectID(_ sensor: String) -> String { Self.topicSafe("\(node)_\(sensor)") }

    /// `text` with anything outside Home Assistant's `A-Z a-z 0-9 _ -` made `_`.
    static func topicSafe(_ text: String) -> String {
        String(
            text.map { character -> Character in
                character.isASCII && (character.isLetter || character.isNumber || character == "-") ? character : "_"
            })
    }

    /// Where the sensor's config goes.
    func configTopic(_ sensor: String) -> String {
        nodeTopicLevel
            ? "\(discoveryPrefix)/sensor/\(Self.topicSafe(node))/\(objectID(sensor))/config"
            : "\(discoveryPrefix)/sensor/\(objectID(sensor))/config"
    }

    /// The sensor's discovery config.
    func config(for sensor: FleetSensor) -> JSON {
        var object: JSONObject = [
            "name": .string(sensor.name),
            "unique_id": .string("bleagent_\(objectID(sensor.id))"),
            "state_topic": .string(topics.sensor(sensor.id)),
            "value_template": "{{ value_json.value }}",
            "availability_topic": .string(topics.status),
            "availability_template": "{{ value_json.state }}",
            "payload_available": "online",
            "payload_not_available": "offline",
            "device": [
                "identifiers": .array([.string("bleagent_\(node)")]),
                "name": .string(node),
                "manufacturer": "bleagent",
                "model": .string("bleagent \(role) node"),
                "sw_version": .string(softwareVersion),
            ],
        ]
        if let deviceClass = sensor.deviceClass { object["device_class"] = .string(deviceClass) }
        if let stateClass = sensor.stateClass { object["state_class"] = .string(stateClass) }
        if let unit = sensor.unit { object["unit_of_measurement"] = .string(unit) }
        return .object(object)
    }

    /// A reading's payload on `<prefix>/sensors/<id>`.
    static func reading(value: Double, time: Double) -> JSON {
        ["value": .double(value), "time": .double(time)]
    }
}
