import JSON
import PluginSupport
import RoleKit

/// The sensor aggregator's config (`roles.peripheral.config`), documented in
/// docs/profiles/sensor-aggregator.md. Every problem is a
/// ``PluginConfigError`` naming the field; unknown fields are errors.
public struct SensorAggregatorConfig: Sendable, Hashable {
    /// The sensors, in order; their index is their id in the binary formats.
    public var sensors: [SensorConfig]
    /// The ingest socket, required when a sensor's source is `ingest`.
    public var ingest: IngestConfig?
    /// The length of every sensor's rolling window, in seconds.
    public var windowSeconds: Int
    /// The most samples one window keeps (the oldest go first), bounding memory.
    public var maxSamplesPerWindow: Int
    /// Notification timing and flow control.
    public var notification: NotificationConfig
    /// Seconds between snapshots of the aggregates: the most a SIGKILL loses.
    public var flushSeconds: Int
    /// What the node advertises.
    public var advertising: AdvertisingConfig
    /// The Device Information service's strings.
    public var deviceInformation: DeviceInformation

    /// The most sensors a config may hold (an id in the summary is one byte;
    /// 32 keeps the summary readable in a few ATT reads).
    public static let maximumSensors = 32
    /// The allowed window lengths: 1 s to 7 days.
    public static let windowRange: ClosedRange<Int64> = 1...604_800

    /// Reads and validates `json`.
    public init(json: JSON) throws(PluginConfigError) {
        let root = try PluginConfigReader(json, path: "")
        try root.allowOnly([
            "sensors", "ingest", "windowSeconds", "maxSamplesPerWindow", "notification", "flushSeconds",
            "advertising", "deviceInformation",
        ])
        guard let list = try root.require("sensors").arrayValue, !list.isEmpty else {
            throw PluginConfigError(path: "sensors", "expected a non-empty array")
        }
        guard list.count <= Self.maximumSensors else {
            throw PluginConfigError(path: "sensors", "at most \(Self.maximumSensors) sensors")
        }
        var sensors: [SensorConfig] = []
        var seen: Set<String> = []
        for (index, item) in list.enumerated() {
            let sensor = try SensorConfig(reading: PluginConfigReader(item, path: "sensors[\(index)]"))
            guard seen.insert(sensor.id).inserted else {
                throw PluginConfigError(path: "sensors[\(index)].id", "\"\(sensor.id)\" is used by an earlier sensor")
            }
            sensors.append(sensor)
        }
        self.sensors = sensors
        ingest = try root.child("ingest").map { reader throws(PluginConfigError) in try IngestConfig(reading: reader) }
        if ingest == nil, let index = sensors.firstIndex(where: { $0.source == .ingest }) {
            throw PluginConfigError(path: "sensors[\(index)].source", "an ingest source needs the ingest section")
        }
        windowSeconds = Int(try root.integer("windowSeconds", in: Self.windowRange) ?? 300)
        maxSamplesPerWindow = Int(try root.integer("maxSamplesPerWindow", in: 1...100_000) ?? 4096)
        notification =
            try root.child("notification").map { reader throws(PluginConfigError) in
                try NotificationConfig(reading: reader)
            } ?? NotificationConfig()
        flushSeconds = Int(try root.integer("flushSeconds", in: 1...3600) ?? 30)
        guard let advertising = try root.child("advertising") else {
            throw PluginConfigError(path: "advertising", "is required (at least localName)")
        }
        self.advertising = try AdvertisingConfig(reading: advertising)
        deviceInformation =
            try root.child("deviceInformation").map { reader throws(PluginConfigError) in
                try DeviceInformation(reading: reader)
            } ?? DeviceInformation()
    }

    /// The first sensor of `kind`: the one its ESS characteristic and BTHome
    /// object carry.
    public func primarySensor(of kind: SensorKind) -> SensorConfig? {
        sensors.first { $0.kind == kind }
    }
}

/// The local ingest socket (`ingest`).
public struct IngestConfig: Sendable, Hashable {
    /// The Unix datagram socket's absolute path.
    public var socketPath: String
    /// Datagrams longer than this are refused as `tooLong`.
    public var maxLineBytes: Int

    /// An ingest socket at `socketPath`.
    public init(socketPath: String, maxLineBytes: Int = 1024) {
        self.socketPath = socketPath
        self.maxLineBytes = maxLineBytes
    }

    init(reading reader: PluginConfigReader) throws(PluginConfigError) {
        try reader.allowOnly(["socketPath", "maxLineBytes"])
        // sun_path holds 108 bytes including the terminating NUL.
        guard let path = try reader.string("socketPath", maxLength: 107), path.hasPrefix("/") else {
            throw PluginConfigError(path: reader.field("socketPath"), "expected an absolute path of at most 107 bytes")
        }
        socketPath = path
        maxLineBytes = Int(try reader.integer("maxLineBytes", in: 64...65_507) ?? 1024)
    }
}

/// When notifications go out (`notification`).
public struct NotificationConfig: Sendable, Hashable {
    /// A subscribed central gets a changed value at least this often, in
    /// seconds, even when the change is below the sensor's delta.
    public var intervalSeconds: Int
    /// The most characteristics with a pending value one slow central may
    /// have queued; past it the oldest pending value is dropped (counted).
    public var queueLimit: Int

    /// The allowed intervals: 1 s to 1 h.
    public static let intervalRange: ClosedRange<Int64> = 1...3600

    /// Notification settings; see each property.
    public init(intervalSeconds: Int = 10, queueLimit: Int = 8) {
        self.intervalSeconds = intervalSeconds
        self.queueLimit = queueLimit
    }

    init(reading reader: PluginConfigReader) throws(PluginConfigError) {
        try reader.allowOnly(["intervalSeconds", "queueLimit"])
        intervalSeconds = Int(try reader.integer("intervalSeconds", in: Self.intervalRange) ?? 10)
        queueLimit = Int(try reader.integer("queueLimit", in: 1...64) ?? 8)
    }
}

/// What the node advertises (`advertising`).
public struct AdvertisingConfig: Sendable, Hashable {
    /// The local name (shortened when the advertisement is full).
    public var localName: String
    /// Whether BTHome v2 service data is advertised.
    public var bthome: Bool
    /// The name is not cut below this many characters while BTHome objects
    /// can still be dropped instead (docs/profiles/sensor-aggregator.md).
    public var minimumNameLength: Int

    /// Advertising settings; see each property.
    public init(localName: String, bthome: Bool = true, minimumNameLength: Int = 4) {
        self.localName = localName
        self.bthome = bthome
        self.minimumNameLength = minimumNameLength
    }

    init(reading reader: PluginConfigReader) throws(PluginConfigError) {
        try reader.allowOnly(["localName", "bthome", "minimumNameLength"])
        guard let name = try reader.string("localName", maxLength: 64) else {
            throw PluginConfigError(path: reader.field("localName"), "is required")
        }
        localName = name
        bthome = try reader.bool("bthome") ?? true
        minimumNameLength = Int(try reader.integer("minimumNameLength", in: 1...22) ?? 4)
    }
}

/// The Device Information service's strings (`deviceInformation`); absent
/// ones are not served.
public struct DeviceInformation: Sendable, Hashable {
    /// Manufacturer Name String (0x2A29).
    public var manufacturer: String?
    /// Model Number String (0x2A24).
    public var model: String?
    /// Serial Number String (0x2A25).
    public var serial: String?
    /// Hardware Revision String (0x2A27).
    public var hardwareRevision: String?
    /// Firmware Revision String (0x2A26).
    public var firmwareRevision: String?
    /// Software Revision String (0x2A28).
    public var softwareRevision: String?

    /// Strings; absent ones are nil.
    public init(
        manufacturer: String? = nil, model: String? = nil, serial: String? = nil, hardwareRevision: String? = nil,
        firmwareRevision: String? = nil, softwareRevision: String? = nil
    ) {
        self.manufacturer = manufacturer
        self.model = model
        self.serial = serial
        self.hardwareRevision = hardwareRevision
        self.firmwareRevision = firmwareRevision
        self.softwareRevision = softwareRevision
    }

    init(reading reader: PluginConfigReader) throws(PluginConfigError) {
        try reader.allowOnly([
            "manufacturer", "model", "serial", "hardwareRevision", "firmwareRevision", "softwareRevision",
        ])
        manufacturer = try reader.string("manufacturer", maxLength: 64)
        model = try reader.string("model", maxLength: 64)
        serial = try reader.string("serial", maxLength: 64)
        hardwareRevision = try reader.string("hardwareRevision", maxLength: 64)
        firmwareRevision = try reader.string("firmwareRevision", maxLength: 64)
        softwareRevision = try reader.string("softwareRevision", maxLength: 64)
    }
}
