import GATT

/// The Aggregates service's Config characteristic: read for the current
/// settings, written with response to change them
/// (docs/profiles/sensor-aggregator.md, "Config").
///
/// ```
/// offset size field
/// 0      1    format version (1)
/// 1      4    window length, seconds (uint32, 1...604800)
/// 5      2    notification interval, seconds (uint16, 1...3600)
/// 7      1    threshold count M (0...32)
/// 8      9*M  thresholds:
///   +0   1    sensor index
///   +1   4    low  (float32; NaN: none)
///   +5   4    high (float32; NaN: none)
/// ```
///
/// A write sets the window and the interval, and the thresholds of the
/// sensors it lists (others keep theirs). A value this build refuses is
/// answered with an application ATT error (``ConfigWriteRefusal``) and
/// changes nothing.
public struct ConfigCharacteristicValue: Sendable, Hashable {
    /// The format version this build reads and writes.
    public static let version: UInt8 = 1

    /// The window length, in seconds.
    public var windowSeconds: UInt32
    /// The notification interval, in seconds.
    public var intervalSeconds: UInt16
    /// Thresholds by sensor index, in ascending index order when read.
    public var thresholds: [(sensorIndex: UInt8, thresholds: Thresholds)]

    /// A value; see each property.
    public init(windowSeconds: UInt32, intervalSeconds: UInt16, thresholds: [(UInt8, Thresholds)] = []) {
        self.windowSeconds = windowSeconds
        self.intervalSeconds = intervalSeconds
        self.thresholds = thresholds.map { (sensorIndex: $0.0, thresholds: $0.1) }
    }

    /// The value `config` reads as: every sensor with a threshold is listed.
    public init(config: SensorAggregatorConfig) {
        var listed: [(UInt8, Thresholds)] = []
        for (index, sensor) in config.sensors.enumerated() where sensor.thresholds != Thresholds() {
            listed.append((UInt8(clamping: index), sensor.thresholds))
        }
        self.init(
            windowSeconds: UInt32(clamping: config.windowSeconds),
            intervalSeconds: UInt16(clamping: config.notification.intervalSeconds), thresholds: listed)
    }

    /// The value's bytes. Limits are written as float32.
    public var bytes: [UInt8] {
        var bytes = [Self.version] + windowSeconds.littleEndianBytes + intervalSeconds.littleEndianBytes
        bytes.append(UInt8(clamping: thresholds.count))
        for (index, limits) in thresholds {
            bytes.append(index)
            bytes += Float(limits.low ?? .nan).littleEndianBytes + Float(limits.high ?? .nan).littleEndianBytes
        }
        return bytes
    }

    /// Decodes and validates a write against a config with `sensorCount`
    /// sensors.
    ///
    /// - Throws: ``ConfigWriteRefusal`` with the application error code and
    ///   the reason to log.
    public static func decode(_ bytes: [UInt8], sensorCount: Int) throws(ConfigWriteRefusal) -> Self {
        guard let version = bytes.first else { throw ConfigWriteRefusal(.invalidLength, "the value is empty") }
        guard version == Self.version else {
            throw ConfigWriteRefusal(.unsupportedVersion, "format version \(version) is not supported (only 1)")
        }
        guard bytes.count >= 8 else {
            throw ConfigWriteRefusal(.invalidLength, "\(bytes.count) bytes; the header alone takes 8")
        }
        let count = Int(bytes[7])
        guard bytes.count == 8 + 9 * count else {
            throw ConfigWriteRefusal(
                .invalidLength, "\(bytes.count) bytes; \(count) thresholds take \(8 + 9 * count)")
        }
        let window = UInt32(littleEndian: bytes, at: 1)
        guard SensorAggregatorConfig.windowRange.contains(Int64(window)) else {
            throw ConfigWriteRefusal(.windowOutOfRange, "window \(window) s is outside 1...604800 s")
        }
        let interval = UInt16(littleEndian: bytes, at: 5)
        guard NotificationConfig.intervalRange.contains(Int64(interval)) else {
            throw ConfigWriteRefusal(.intervalOutOfRange, "notification interval \(interval) s is outside 1...3600 s")
        }
        var thresholds: [(UInt8, Thresholds)] = []
        var seen: Set<UInt8> = []
        for entry in 0..<count {
            let base = 8 + 9 * entry
            let index = bytes[base]
            guard Int(index) < sensorCount else {
                throw ConfigWriteRefusal(
                    .unknownSensor, "sensor index \(index) is not configured (\(sensorCount) sensors)")
            }
            guard seen.insert(index).inserted else {
                throw ConfigWriteRefusal(.duplicateSensor, "sensor index \(index) is listed twice")
            }
            let low = Float(littleEndian: bytes, at: base + 1)
            let high = Float(littleEndian: bytes, at: base + 5)
            let limits = Thresholds(low: low.isNaN ? nil : Double(low), high: high.isNaN ? nil : Double(high))
            guard limits.isValid else {
                throw ConfigWriteRefusal(
                    .invalidThreshold,
                    "sensor index \(index): low \(low) and high \(high) are not ordered finite limits")
            }
            thresholds.append((index, limits))
        }
        return Self(windowSeconds: window, intervalSeconds: interval, thresholds: thresholds)
    }

    /// Compares fields, thresholds in order.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.windowSeconds == rhs.windowSeconds && lhs.intervalSeconds == rhs.intervalSeconds
            && lhs.thresholds.map(\.sensorIndex) == rhs.thresholds.map(\.sensorIndex)
            && lhs.thresholds.map(\.thresholds) == rhs.thresholds.map(\.thresholds)
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(windowSeconds)
        hasher.combine(intervalSeconds)
        for (index, limits) in thresholds {
            hasher.combine(index)
            hasher.combine(limits)
        }
    }

    /// `config` with this write applied.
    public func applied(to config: SensorAggregatorConfig) -> SensorAggregatorConfig {
        var updated = config
        updated.windowSeconds = Int(windowSeconds)
        updated.notification.intervalSeconds = Int(intervalSeconds)
        for (index, limits) in thresholds where Int(index) < updated.sensors.count {
            updated.sensors[Int(index)].thresholds = limits
        }
        return updated
    }
}

/// A refused Config write: the ATT error the central receives and the reason
/// the plugin logs.
public struct ConfigWriteRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// Why, as a code in the application range 0x80-0x9F.
    public enum Reason: UInt8, Sendable, Hashable, CaseIterable {
        /// 0x80: the version byte is not 1.
        case unsupportedVersion = 0x80
        /// 0x81: the length does not match the format.
        case invalidLength = 0x81
        /// 0x82: the window is outside 1...604800 s.
        case windowOutOfRange = 0x82
        /// 0x83: the interval is outside 1...3600 s.
        case intervalOutOfRange = 0x83
        /// 0x84: a threshold names a sensor index that is not configured.
        case unknownSensor = 0x84
        /// 0x85: a threshold's low is above its high, or a limit is infinite.
        case invalidThreshold = 0x85
        /// 0x86: a sensor index is listed twice.
        case duplicateSensor = 0x86
    }

    /// The reason's code.
    public let reason: Reason
    /// One sentence for the log.
    public let message: String

    /// A refusal for `reason`, explained by `message`.
    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    /// The ATT error to answer the write with.
    public var attError: ATTError { ATTError(reason.rawValue) }

    /// `Config write refused (0x82): window 0 s is outside 1...604800 s`.
    public var description: String { "Config write refused (\(attError)): \(message)" }
}
