import JSON
import RoleKit

/// One sensor in the plugin config (`sensors[i]`).
public struct SensorConfig: Sendable, Hashable {
    /// The sensor's name: 1-32 characters from `A-Z a-z 0-9 . _ -`, unique.
    /// Ingest lines name it in `"sensor"`.
    public var id: String
    /// What it measures.
    public var kind: SensorKind
    /// The unit of its values: the kind's ``SensorKind/canonicalUnit`` for
    /// the standard kinds, any name for `generic`.
    public var unit: String
    /// Where readings come from.
    public var source: SensorSource
    /// The smallest change worth an immediate notification; nil notifies
    /// changes only at the notification interval.
    public var notifyDelta: Double?
    /// Alarm limits: crossing one notifies at once and emits a plugin event.
    public var thresholds: Thresholds

    /// A sensor; see each property.
    public init(
        id: String, kind: SensorKind, unit: String, source: SensorSource, notifyDelta: Double? = nil,
        thresholds: Thresholds = Thresholds()
    ) {
        self.id = id
        self.kind = kind
        self.unit = unit
        self.source = source
        self.notifyDelta = notifyDelta
        self.thresholds = thresholds
    }

    /// Whether `id` is a valid sensor name.
    public static func isValidID(_ id: String) -> Bool {
        (1...32).contains(id.utf8.count)
            && id.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == 0x2E || byte == 0x5F || byte == 0x2D
            }
    }

    /// Reads `sensors[i]`; nil when a required part is missing or wrong
    /// (every problem is in the reader's report).
    init?(reading reader: JSONFieldReader) {
        reader.allowOnly(["id", "kind", "unit", "source", "notifyDelta", "thresholds"])
        let id = reader.read("id", required: true, "1-32 characters from A-Z a-z 0-9 . _ -") { value in
            value.stringValue.flatMap { Self.isValidID($0) ? $0 : nil }
        }
        let kind: SensorKind? = reader.choice("kind", required: true)
        let unit = reader.string("unit", maxBytes: 16)
        var unitIsValid = true
        if let kind {
            switch (kind.canonicalUnit, unit) {
            case (nil, nil):
                reader.issue("unit", "is required for a generic sensor")
                unitIsValid = false
            case (let canonical?, let given?) where canonical != given:
                reader.issue("unit", "a \(kind.rawValue) sensor's values are in \(canonical) (use scale)")
                unitIsValid = false
            default:
                break
            }
        }
        let source = reader.object("source", required: true).flatMap(SensorSource.init(reading:))
        let notifyDelta = reader.number("notifyDelta", in: 0...1e9)
        let thresholds = reader.object("thresholds").map(Thresholds.init(reading:)) ?? Thresholds()
        guard let id, let kind, let source, unitIsValid else { return nil }
        self.init(
            id: id, kind: kind, unit: unit ?? kind.canonicalUnit ?? "", source: source, notifyDelta: notifyDelta,
            thresholds: thresholds)
    }
}

/// Alarm limits for one sensor; either may be absent.
public struct Thresholds: Sendable, Hashable {
    /// A reading below this is an alarm.
    public var low: Double?
    /// A reading above this is an alarm.
    public var high: Double?

    /// Limits `low` and `high` (nil: none).
    public init(low: Double? = nil, high: Double? = nil) {
        self.low = low
        self.high = high
    }

    /// Whether `low <= high` when both are set and both are finite.
    public var isValid: Bool {
        if let low, !low.isFinite { return false }
        if let high, !high.isFinite { return false }
        if let low, let high { return low <= high }
        return true
    }

    /// Which limit `value` is beyond, if any.
    public func breach(of value: Double) -> ThresholdBreach? {
        if let low, value < low { return .below }
        if let high, value > high { return .above }
        return nil
    }

    init(reading reader: JSONFieldReader) {
        reader.allowOnly(["low", "high"])
        low = reader.number("low", in: -1e12...1e12)
        high = reader.number("high", in: -1e12...1e12)
        if !isValid { reader.issue(nil, "low must not be above high") }
    }
}

/// Which side of its thresholds a value is on.
public enum ThresholdBreach: String, Sendable, Hashable {
    /// Below ``Thresholds/low``.
    case below
    /// Above ``Thresholds/high``.
    case above
}
