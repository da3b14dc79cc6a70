import JSON

/// A device whose readings a plugin relays to the fleet (a BLE sensor the
/// sensor gateway hears): its readings go to `<prefix>/sensors/<id>/<reading>`
/// and, with Home Assistant discovery, it is a Home Assistant device of its
/// own, reached via the node (docs/fleet.md, "Relayed devices").
public struct FleetDevice: Sendable, Hashable {
    /// Its topic level under `<prefix>/sensors/`: 1-32 of `a-z 0-9 _ -`
    /// (the gateway uses the address's 12 hex digits, lower case).
    public var id: String
    /// The name shown for it.
    public var name: String
    /// What it is (`BTHome v2 sensor`).
    public var model: String?
    /// Its firmware version, when it says.
    public var softwareVersion: String?
    /// Its Bluetooth address (`AA:BB:CC:DD:EE:FF`): Home Assistant's
    /// `connections` join it to the same device seen by another gateway or
    /// by Home Assistant's own Bluetooth.
    public var bluetoothAddress: String?

    /// A device.
    public init(
        id: String, name: String, model: String? = nil, softwareVersion: String? = nil,
        bluetoothAddress: String? = nil
    ) {
        self.id = id
        self.name = name
        self.model = model
        self.softwareVersion = softwareVersion
        self.bluetoothAddress = bluetoothAddress
    }

    /// Whether `text` is a valid ``id`` or reading id: 1-32 of `a-z 0-9 _ -`.
    public static func isTopicLevel(_ text: String) -> Bool {
        (1...32).contains(text.utf8.count)
            && text.utf8.allSatisfy {
                (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F || $0 == 0x2D
            }
    }
}

/// One reading of a ``FleetDevice``: its latest value and how Home Assistant
/// should show it. Sensors and binary sensors are states (published
/// retained); events are not.
public struct FleetDeviceReading: Sendable, Hashable {
    /// The value, which also picks Home Assistant's entity platform.
    public enum Value: Sendable, Hashable {
        /// A measurement: a `sensor`.
        case number(Double)
        /// A text: a `sensor` without unit or state class.
        case text(String)
        /// On or off: a `binary_sensor`.
        case flag(Bool)
        /// Something that happened (a button press): an `event` entity; `data`
        /// goes into the payload beside `event_type`.
        case event(type: String, data: JSONObject = [:])
    }

    /// Its topic level under the device: 1-32 of `a-z 0-9 _ -`, unique within the device.
    public var id: String
    /// The name shown for it.
    public var name: String
    /// The value.
    public var value: Value
    /// When it was measured, seconds since the epoch.
    public var time: Double
    /// Home Assistant's device class (`temperature`, `door`), or nil.
    public var deviceClass: String?
    /// Home Assistant's state class (`measurement`, `total_increasing`), or nil.
    public var stateClass: String?
    /// The unit as Home Assistant spells it, or nil.
    public var unit: String?
    /// For an event: every type it may have (`press`, `long_press`, ...).
    public var eventTypes: [String]

    /// A reading.
    public init(
        id: String, name: String, value: Value, time: Double, deviceClass: String? = nil, stateClass: String? = nil,
        unit: String? = nil, eventTypes: [String] = []
    ) {
        self.id = id
        self.name = name
        self.value = value
        self.time = time
        self.deviceClass = deviceClass
        self.stateClass = stateClass
        self.unit = unit
        self.eventTypes = eventTypes
    }

    /// Whether it is a state (kept by the broker for late subscribers), not an event.
    public var isState: Bool {
        if case .event = value { return false }
        return true
    }

    /// The same reading as Home Assistant would be told about it, without
    /// the value: two readings with equal descriptions need no new discovery config.
    public var announcement: Announcement {
        Announcement(
            platform: platform, name: name, deviceClass: deviceClass, stateClass: stateClass, unit: unit,
            eventTypes: eventTypes)
    }

    /// Home Assistant's entity platform: `sensor`, `binary_sensor` or `event`.
    public var platform: String {
        switch value {
        case .number, .text: "sensor"
        case .flag: "binary_sensor"
        case .event: "event"
        }
    }

    /// What a discovery config says about a reading.
    public struct Announcement: Sendable, Hashable {
        /// `sensor`, `binary_sensor` or `event`.
        public var platform: String
        /// The name shown.
        public var name: String
        /// The device class.
        public var deviceClass: String?
        /// The state class.
        public var stateClass: String?
        /// The unit.
        public var unit: String?
        /// An event's types.
        public var eventTypes: [String]
    }
}
