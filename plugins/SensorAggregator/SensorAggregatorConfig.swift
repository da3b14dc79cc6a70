import JSON
import RoleKit

/// The sensor aggregator's config (`roles.peripheral.config`), documented in
/// docs/profiles/sensor-aggregator.md. Every problem is reported with its
/// field path; unknown fields are errors.
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

    /// Reads and validates `json`; every problem is reported, each named by
    /// its field path (`sensors[1].source.path`).
    public init(json: JSON) throws(JSONFieldErrors) {
        let report = JSONFieldReport()
        guard let root = JSONFieldReader(json, report: report) else { throw JSONFieldErrors(report.errors) }
        root.allowOnly([
            "sensors", "ingest", "windowSeconds", "maxSamplesPerWindow", "notification", "flushSeconds",
            "advertising", "deviceInformation",
        ])
        let list = root.array("sensors", required: true, count: 1...Self.maximumSensors) ?? []
        var sensors: [SensorConfig] = []
        var seen: Set<String> = []
        var ingestSources: [Int] = []
        for (index, item) in list.enumerated() {
            guard let reader = JSONFieldReader(item, path: "sensors[\(index)]", report: report) else { continue }
            if let id = item["id"]?.stringValue, SensorConfig.isValidID(id), !seen.insert(id).inserted {
                reader.issue("id", "\"\(id)\" is used by an earlier sensor")
            }
            if item["source"]?["type"] == "ingest" { ingestSources.append(index) }
            if let sensor = SensorConfig(reading: reader) { sensors.append(sensor) }
        }
        self.sensors = sensors
        ingest = root.object("ingest").flatMap(IngestConfig.init(reading:))
        if root.object["ingest"] == nil, let index = ingestSources.first {
            report.add(path: "sensors[\(index)].source", "an ingest source needs the ingest section")
        }
        windowSeconds = Int(root.integer("windowSeconds", in: Self.windowRange) ?? 300)
        maxSamplesPerWindow = Int(root.integer("maxSamplesPerWindow", in: 1...100_000) ?? 4096)
        notification = root.object("notification").map(NotificationConfig.init(reading:)) ?? NotificationConfig()
        flushSeconds = Int(root.integer("flushSeconds", in: 1...3600) ?? 30)
        advertising =
            root.object("advertising", required: true).flatMap(AdvertisingConfig.init(reading:))
            ?? AdvertisingConfig(localName: "")
        deviceInformation =
            root.object("deviceInformation").map(DeviceInformation.init(reading:)) ?? DeviceInformation()
        try report.check()
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

    init?(reading reader: JSONFieldReader) {
        reader.allowOnly(["socketPath", "maxLineBytes"])
        // sun_path holds 108 bytes including the terminating NUL.
        let path = reader.read("socketPath", required: true, "an absolute path of at most 107 bytes") { value in
            value.stringValue.flatMap { $0.hasPrefix("/") && $0.utf8.count <= 107 ? $0 : nil }
        }
        maxLineBytes = Int(reader.integer("maxLineBytes", in: 64...65_507) ?? 1024)
        guard let path else { return nil }
        socketPath = path
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

    init(reading reader: JSONFieldReader) {
        reader.allowOnly(["intervalSeconds", "queueLimit"])
        intervalSeconds = Int(reader.integer("intervalSeconds", in: Self.intervalRange) ?? 10)
        queueLimit = Int(reader.integer("queueLimit", in: 1...64) ?? 8)
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

    init?(reading reader: JSONFieldReader) {
        reader.allowOnly(["localName", "bthome", "minimumNameLength"])
        let name = reader.string("localName", required: true, maxBytes: 64)
        bthome = reader.bool("bthome") ?? true
        minimumNameLength = Int(reader.integer("minimumNameLength", in: 1...22) ?? 4)
        guard let name else { return nil }
        localName = name
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

    init(reading reader: JSONFieldReader) {
        reader.allowOnly([
            "manufacturer", "model", "serial", "hardwareRevision", "firmwareRevision", "softwareRevision",
        ])
        manufacturer = reader.string("manufacturer", maxBytes: 64)
        model = reader.string("model", maxBytes: 64)
        serial = reader.string("serial", maxBytes: 64)
        hardwareRevision = reader.string("hardwareRevision", maxBytes: 64)
        firmwareRevision = reader.string("firmwareRevision", maxBytes: 64)
        softwareRevision = reader.string("softwareRevision", maxBytes: 64)
    }
}
