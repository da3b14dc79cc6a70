import JSON

/// Turns one ingest datagram (a JSON line) into a ``SensorReading``, or says
/// why not. Never throws: a bad line is a counted ``IngestRejection``.
///
/// A line is an object: `{"sensor": "room", "value": 21.5, "unit": "degC",
/// "ts": 1700000000.25}`. `sensor` and `value` are required; `unit`, when
/// present, must equal the sensor's configured unit; `ts` (seconds since the
/// Unix epoch) defaults to the time of arrival and may be at most
/// ``maximumFutureSkew`` seconds ahead of it. Unknown members are ignored, so
/// senders may add their own. One trailing newline (LF or CRLF) is allowed.
public struct IngestLineParser: Sendable {
    /// The configured sensors' units by id (only `ingest` sources accept lines).
    public let units: [String: String]
    /// Lines longer than this are refused unread.
    public let maxLineBytes: Int
    /// How far in the future a timestamp may be (clock skew), in seconds.
    public static let maximumFutureSkew = 60.0

    /// A parser for the ingest sensors of `config`.
    public init(config: SensorAggregatorConfig) {
        var units: [String: String] = [:]
        for sensor in config.sensors where sensor.source == .ingest { units[sensor.id] = sensor.unit }
        self.init(units: units, maxLineBytes: config.ingest?.maxLineBytes ?? 1024)
    }

    /// A parser accepting `units` (sensor id to unit).
    public init(units: [String: String], maxLineBytes: Int) {
        self.units = units
        self.maxLineBytes = maxLineBytes
    }

    /// Parses `line`, received at `now`.
    public func parse(_ line: [UInt8], now: Double) -> Result<SensorReading, IngestRejection> {
        guard line.count <= maxLineBytes else { return .failure(.tooLong) }
        var body = line[...]
        if body.last == 0x0A { body = body.dropLast() }
        if body.last == 0x0D { body = body.dropLast() }
        guard !body.isEmpty else { return .failure(.empty) }
        guard let json = try? JSON(parsing: body) else { return .failure(.notJSON) }
        guard let object = json.objectValue else { return .failure(.notAnObject) }
        guard let sensorValue = object["sensor"] else { return .failure(.missingSensor) }
        guard let sensor = sensorValue.stringValue else { return .failure(.badSensor) }
        guard let unit = units[sensor] else { return .failure(.unknownSensor) }
        guard let valueMember = object["value"] else { return .failure(.missingValue) }
        guard let value = valueMember.doubleValue, value.isFinite else { return .failure(.badValue) }
        if let unitMember = object["unit"], !unitMember.isNull {
            guard let given = unitMember.stringValue else { return .failure(.badUnit) }
            guard given == unit else { return .failure(.unitMismatch) }
        }
        var time = now
        if let tsMember = object["ts"], !tsMember.isNull {
            guard let ts = tsMember.doubleValue, ts.isFinite, ts > 0 else { return .failure(.badTimestamp) }
            guard ts <= now + Self.maximumFutureSkew else { return .failure(.futureTimestamp) }
            time = ts
        }
        return .success(SensorReading(sensor: sensor, value: value, time: time))
    }
}

/// Why an ingest line was refused; each reason has its own counter.
public enum IngestRejection: String, Error, Sendable, Hashable, CaseIterable {
    /// Longer than the configured maximum.
    case tooLong
    /// Nothing but a line ending.
    case empty
    /// Not JSON (or not UTF-8).
    case notJSON
    /// JSON, but not an object.
    case notAnObject
    /// No `sensor` member.
    case missingSensor
    /// `sensor` is not a string.
    case badSensor
    /// No ingest sensor has that id.
    case unknownSensor
    /// No `value` member.
    case missingValue
    /// `value` is not a finite number.
    case badValue
    /// `unit` is not a string.
    case badUnit
    /// `unit` is not the sensor's unit.
    case unitMismatch
    /// `ts` is not a positive finite number.
    case badTimestamp
    /// `ts` is further ahead than the allowed clock skew.
    case futureTimestamp
    /// Well-formed, but older than the sensor's window.
    case outsideWindow
    /// Outside the physical range of the sensor's kind (``SensorKind/physicalRange``).
    case outOfRange
}

/// How many ingest lines were accepted, and how many refused for each reason.
public struct IngestCounters: Sendable, Hashable {
    /// Lines that became readings.
    public private(set) var accepted = 0
    /// Refused lines by reason (reasons never seen are absent).
    public private(set) var rejected: [IngestRejection: Int] = [:]

    /// No lines yet.
    public init() {}

    /// Counts one accepted line.
    public mutating func countAccepted() { accepted += 1 }

    /// Counts one refused line.
    public mutating func count(_ rejection: IngestRejection) { rejected[rejection, default: 0] += 1 }

    /// How many lines were refused for `reason`.
    public func rejections(_ reason: IngestRejection) -> Int { rejected[reason] ?? 0 }

    /// Every refused line.
    public var totalRejected: Int { rejected.values.reduce(0, +) }
}
