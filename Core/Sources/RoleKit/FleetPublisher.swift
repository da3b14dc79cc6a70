import JSON

/// One record a plugin hands to the agent's durable outbox: published at
/// QoS 1 (or 2) to `<prefix>/<stream>` until the broker acknowledges it,
/// across broker outages and agent crashes (docs/fleet.md, "Durable records").
public struct DurableRecord: Sendable, Hashable {
    /// How a record is admitted when the outbox fills.
    public enum Admission: Sendable, Hashable {
        /// A record that starts something (a payment accepted): refused once
        /// the outbox is 90 % full, so that what already started can finish.
        case opening
        /// A record that finishes something already published (a final
        /// status): may use the last 10 %.
        case closing
    }

    /// The topic level under the node's prefix: a lower-case name such as
    /// `payments` (not `status`, `events`, `rpc`, `config` or `sensors`).
    public var stream: String
    /// What consumers deduplicate by, with the payload's own state (a
    /// transaction id).
    public var key: String
    /// The record; the agent wraps it as `{"key", "seq", "node", "stream", "record"}`.
    public var payload: JSON
    /// How it is admitted when the outbox fills.
    public var admission: Admission

    /// A record for `stream` under `key`.
    public init(stream: String, key: String, payload: JSON, admission: Admission = .opening) {
        self.stream = stream
        self.key = key
        self.payload = payload
        self.admission = admission
    }
}

/// Why a durable record was not taken. Nothing was stored.
public enum DurablePublishError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The outbox holds as much as it may (`fleet.outbox`): the broker has
    /// been unreachable for long. `depth` records wait.
    case outboxFull(depth: Int)
    /// The record cannot be stored: a bad stream name, a key or payload too large.
    case invalid(String)
    /// Writing the outbox failed (the disk).
    case storage(String)

    /// One sentence.
    public var description: String {
        switch self {
        case .outboxFull(let depth): "the fleet outbox is full (\(depth) records wait for the broker)"
        case .invalid(let why): "not a storable record: \(why)"
        case .storage(let why): "the fleet outbox cannot be written: \(why)"
        }
    }
}

/// A sensor a plugin publishes readings of, as Home Assistant should show it.
/// The field values follow Home Assistant's MQTT sensor (docs/fleet.md).
public struct FleetSensor: Sendable, Hashable {
    /// The sensor's id: `<prefix>/sensors/<id>`; 1-32 of `A-Z a-z 0-9 _ - .`.
    public var id: String
    /// The name shown for it.
    public var name: String
    /// Home Assistant's sensor device class (`temperature`, `humidity`,
    /// `pressure`, `battery`), or nil for a plain value.
    public var deviceClass: String?
    /// Home Assistant's state class (`measurement` for readings).
    public var stateClass: String?
    /// The unit as Home Assistant spells it (`°C`, `%`, `Pa`).
    public var unit: String?

    /// A sensor.
    public init(id: String, name: String, deviceClass: String?, stateClass: String? = "measurement", unit: String?) {
        self.id = id
        self.name = name
        self.deviceClass = deviceClass
        self.stateClass = stateClass
        self.unit = unit
    }
}

/// The agent's MQTT side as a plugin sees it. Without a `fleet` section in
/// the config every call succeeds and publishes nothing.
public protocol FleetPublisher: Sendable {
    /// Whether the config has a fleet section (records are kept and delivered).
    var isEnabled: Bool { get }

    /// Stores `record` in the outbox (written and fsync'd) and returns once
    /// it is on disk; it is then delivered until the broker acknowledges it,
    /// whatever happens to the agent or the broker. Call it after the
    /// plugin's own state is durable; duplicates are possible (at least
    /// once), so consumers deduplicate by key and state.
    func publishDurable(_ record: DurableRecord) async throws(DurablePublishError)

    /// Declares the sensors whose readings follow (replacing earlier
    /// declarations): their Home Assistant discovery configs are published
    /// when enabled.
    func declareSensors(_ sensors: [FleetSensor])

    /// Publishes a reading to `<prefix>/sensors/<id>`. Never blocks: readings
    /// waiting for the broker are coalesced per sensor (the newest wins).
    func publishReading(sensor: String, value: Double, time: Double)

    /// Publishes `readings` of `device` (another device whose readings the
    /// plugin relays) to `<prefix>/sensors/<device>/<reading>`, marks the
    /// device available, and publishes a Home Assistant discovery config for
    /// each reading not announced before (when enabled). Never blocks:
    /// what waits for the broker is coalesced per reading (the newest wins),
    /// bounded by the number of devices (docs/fleet.md, "Relayed devices").
    func publishDeviceReadings(_ device: FleetDevice, _ readings: [FleetDeviceReading])

    /// The device with id `device` is gone (no longer heard): its
    /// availability becomes `offline` (retained) and the fleet forgets it.
    func deviceUnavailable(_ device: String)
}

/// The publisher a context gets without a fleet section: takes everything, publishes nothing.
public struct NoFleet: FleetPublisher {
    /// The publisher.
    public init() {}
    /// Always false.
    public var isEnabled: Bool { false }
    /// Returns at once.
    public func publishDurable(_ record: DurableRecord) async throws(DurablePublishError) {}
    /// Does nothing.
    public func declareSensors(_ sensors: [FleetSensor]) {}
    /// Does nothing.
    public func publishReading(sensor: String, value: Double, time: Double) {}
    /// Does nothing.
    public func publishDeviceReadings(_ device: FleetDevice, _ readings: [FleetDeviceReading]) {}
    /// Does nothing.
    public func deviceUnavailable(_ device: String) {}
}
