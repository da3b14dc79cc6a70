import JSON
import RoleKit

/// Home Assistant MQTT discovery for the devices a plugin relays (docs/fleet.md,
/// "Relayed devices"): one retained config per reading at
/// `<discovery prefix>/<platform>/<node>_<device>_<reading>/config`, the
/// reading a `sensor`, `binary_sensor` or `event` entity of a Home Assistant
/// device of its own (joined by its Bluetooth address to the same device seen
/// elsewhere), reached via the node. Available while both the node
/// (`<prefix>/status`) and the device (`<prefix>/sensors/<device>/availability`)
/// say so.
extension HomeAssistantDiscovery {
    /// Where a relayed device's reading's config goes.
    func configTopic(device: String, reading: FleetDeviceReading) -> String {
        let object = Self.topicSafe("\(node)_\(device)_\(reading.id)")
        return nodeTopicLevel
            ? "\(discoveryPrefix)/\(reading.platform)/\(Self.topicSafe(node))/\(object)/config"
            : "\(discoveryPrefix)/\(reading.platform)/\(object)/config"
    }

    /// A relayed device's reading's discovery config.
    func config(device: FleetDevice, reading: FleetDeviceReading) -> JSON {
        var hardware: JSONObject = [
            "identifiers": .array([.string("bleagent_\(Self.topicSafe(node))_\(device.id)")]),
            "name": .string(device.name),
            "via_device": .string("bleagent_\(node)"),
        ]
        if let address = device.bluetoothAddress {
            hardware["connections"] = .array([.array(["bluetooth", .string(address.lowercased())])])
        }
        if let model = device.model { hardware["model"] = .string(model) }
        if let version = device.softwareVersion { hardware["sw_version"] = .string(version) }
        var object: JSONObject = [
            "name": .string(reading.name),
            "unique_id": .string("bleagent_\(Self.topicSafe("\(node)_\(device.id)_\(reading.id)"))"),
            "state_topic": .string(topics.deviceReading(device.id, reading.id)),
            "availability": [
                ["topic": .string(topics.status), "value_template": "{{ value_json.state }}"],
                ["topic": .string(topics.deviceAvailability(device.id))],
            ],
            "availability_mode": "all",
            "device": .object(hardware),
        ]
        switch reading.value {
        case .number, .text: object["value_template"] = "{{ value_json.value }}"
        case .flag: object["value_template"] = "{{ 'ON' if value_json.value else 'OFF' }}"
        case .event: object["event_types"] = .array(reading.eventTypes.map(JSON.string))
        }
        if let deviceClass = reading.deviceClass { object["device_class"] = .string(deviceClass) }
        if let stateClass = reading.stateClass { object["state_class"] = .string(stateClass) }
        if let unit = reading.unit { object["unit_of_measurement"] = .string(unit) }
        return .object(object)
    }

    /// A relayed reading's payload on `<prefix>/sensors/<device>/<reading>`:
    /// `{"value", "time"}`, or for an event `{"event_type", "time", ...}`.
    static func payload(_ reading: FleetDeviceReading) -> JSON {
        switch reading.value {
        case .number(let number): ["value": .double(number), "time": .double(reading.time)]
        case .text(let text): ["value": .string(text), "time": .double(reading.time)]
        case .flag(let flag): ["value": .bool(flag), "time": .double(reading.time)]
        case .event(let type, let data):
            {
                var object = data
                object["event_type"] = .string(type)
                object["time"] = .double(reading.time)
                return .object(object)
            }()
        }
    }
}
