import JSON
import RoleKit

/// How the gateway's devices and readings appear on the fleet broker
/// (docs/profiles/sensor-gateway.md, "Hand-off over MQTT"): pure mapping from
/// an update to a ``FleetDevice`` and its ``FleetDeviceReading``s, with Home
/// Assistant's device class, state class and unit for each reading.
public enum FleetReadings {
    /// The device's topic level: its address's 12 hex digits, lower case.
    public static func deviceID(_ address: DeviceAddress) -> String {
        address.description.lowercased().filter { $0 != ":" }
    }

    /// The device as Home Assistant shows it.
    public static func device(_ update: ReadingUpdate) -> FleetDevice {
        FleetDevice(
            id: deviceID(update.address), name: update.name ?? update.address.description,
            model: model(update.kind), softwareVersion: update.firmware,
            bluetoothAddress: update.address.description)
    }

    /// What the device is, by the format of its advertisements.
    static func model(_ kind: DeviceKind) -> String {
        switch kind {
        case .bthome: "BTHome v2 sensor"
        case .aggregator: "bleagent sensor aggregator"
        case .ibeacon: "iBeacon"
        case .eddystone: "Eddystone beacon"
        case .unknown: "BLE device"
        }
    }

    /// Every state the device holds and the events that just happened:
    /// the fleet publishes the states that changed since it last did.
    public static func readings(_ update: ReadingUpdate, clock: GatewayClock) -> [FleetDeviceReading] {
        let events = update.readings.filter { $0.reading.kind == .event }
        return (update.states + events).map { stored in
            reading(stored.reading, time: Double(clock.unixMilliseconds(stored.at)) / 1000)
        }
    }

    /// One reading: its topic level, name, value and Home Assistant classes.
    static func reading(_ reading: Reading, time: Double) -> FleetDeviceReading {
        let base = baseName(reading.name)
        var homeAssistant = Self.classes(reading.kind, base: base)
        let value: FleetDeviceReading.Value
        switch reading.value {
        case .number(let number): value = .number(number)
        case .flag(let flag): value = .flag(flag)
        case .text(let text):
            value = .text(text)
            homeAssistant = (nil, nil)
        case .event(let type, let steps, let arguments):
            var data = JSONObject()
            if let steps { data["steps"] = .int(Int64(steps)) }
            if let arguments { data["arguments"] = .string(arguments) }
            value = .event(type: type, data: data)
        }
        return FleetDeviceReading(
            id: topicLevel(reading.key), name: displayName(reading.name), value: value, time: time,
            deviceClass: homeAssistant.device, stateClass: homeAssistant.state,
            unit: reading.kind == .sensor ? reading.unit : nil,
            eventTypes: eventTypes[base] ?? [])
    }

    /// A reading's topic level: its name; a binary sensor whose name a sensor
    /// also has (`battery`, `power`, `moisture`, `gas`) takes `_binary`.
    public static func topicLevel(_ key: ReadingKey) -> String {
        key.kind == .binary && sensorNames.contains(baseName(key.name)) ? "\(key.name)_binary" : key.name
    }

    /// `temperature_2` → `temperature`.
    static func baseName(_ name: String) -> String {
        guard let underscore = name.lastIndex(of: "_"), name[name.index(after: underscore)...].allSatisfy(\.isNumber),
            name.index(after: underscore) < name.endIndex
        else { return name }
        return String(name[..<underscore])
    }

    /// `dew_point_2` → `Dew point 2`.
    static func displayName(_ name: String) -> String {
        let words = String(name.map { $0 == "_" ? " " : $0 })
        return words.prefix(1).uppercased() + words.dropFirst()
    }

    /// The names BTHome's sensors (not binary sensors) have.
    static let sensorNames = Set(BTHomeObjectType.all.filter { $0.kind == .sensor }.map(\.name))

    /// Each event's types, for Home Assistant's event entity.
    static let eventTypes: [String: [String]] = [
        "button": BTHomeDecoder.buttonEvents.keys.sorted().compactMap { BTHomeDecoder.buttonEvents[$0] },
        "dimmer": BTHomeDecoder.dimmerEvents.keys.sorted().compactMap { BTHomeDecoder.dimmerEvents[$0] },
        "command": BTHomeDecoder.commandEvents.keys.sorted().compactMap { BTHomeDecoder.commandEvents[$0] },
    ]

    /// Home Assistant's device class and state class for a reading.
    static func classes(_ kind: Reading.Kind, base: String) -> (device: String?, state: String?) {
        switch kind {
        case .binary: (binaryDeviceClasses.contains(base) ? base : nil, nil)
        case .event: (base == "button" ? "button" : nil, nil)
        case .sensor: sensorClasses[base] ?? (sameNameClasses.contains(base) ? base : nil, "measurement")
        }
    }

    /// Sensors whose Home Assistant device class is not their own name, or
    /// whose state class is not `measurement` (ids and times have none).
    static let sensorClasses: [String: (device: String?, state: String?)] = [
        "dew_point": ("temperature", "measurement"), "mass": ("weight", "measurement"),
        "energy": ("energy", "total_increasing"), "gas": ("gas", "total_increasing"),
        "water": ("water", "total_increasing"), "volume": ("volume", "total"),
        "measured_power": ("signal_strength", "measurement"), "tx_power": ("signal_strength", "measurement"),
        "uptime": ("duration", "total_increasing"), "advertisements": (nil, "total_increasing"),
        "timestamp": (nil, nil), "major": (nil, nil), "minor": (nil, nil),
    ]

    /// Sensors whose name is their Home Assistant device class (a `measurement`).
    static let sameNameClasses: Set<String> = [
        "battery", "temperature", "humidity", "pressure", "illuminance", "power", "voltage", "pm25", "pm10",
        "carbon_dioxide", "volatile_organic_compounds", "moisture", "distance", "duration", "current", "speed",
        "volume_flow_rate", "volume_storage", "conductivity", "precipitation",
    ]

    /// BTHome's binary sensors whose name is a Home Assistant binary sensor device class.
    static let binaryDeviceClasses: Set<String> = [
        "battery", "battery_charging", "carbon_monoxide", "cold", "connectivity", "door", "garage_door", "gas",
        "heat", "light", "lock", "moisture", "motion", "moving", "occupancy", "opening", "plug", "power", "presence",
        "problem", "running", "safety", "smoke", "sound", "tamper", "vibration", "window",
    ]
}

/// Hands the gateway's updates to the agent's fleet: each device's readings
/// to `<prefix>/sensors/<device>/<reading>` with Home Assistant discovery, and
/// `offline` when it goes. Without a fleet section the publisher drops them.
public struct FleetReadingSink: ReadingSink {
    private let fleet: any FleetPublisher

    /// A sink publishing through `fleet`.
    public init(fleet: any FleetPublisher) { self.fleet = fleet }

    /// Publishes the device and its readings (the fleet coalesces and bounds them).
    public func publish(_ update: ReadingUpdate, clock: GatewayClock) {
        guard fleet.isEnabled else { return }
        fleet.publishDeviceReadings(FleetReadings.device(update), FleetReadings.readings(update, clock: clock))
    }

    /// The device's availability becomes `offline`.
    public func departed(_ address: DeviceAddress) {
        fleet.deviceUnavailable(FleetReadings.deviceID(address))
    }
}
