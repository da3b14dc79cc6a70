/// The Aggregates service's Summary characteristic: every sensor's window
/// in one binary value (docs/profiles/sensor-aggregator.md, "Summary").
///
/// ```
/// offset size field
/// 0      1    format version (1)
/// 1      1    record count N
/// 2      26*N records:
///   +0   1    sensor index (its position in the config's sensors)
///   +1   1    kind (0 generic, 1 temperature, 2 humidity, 3 pressure, 4 battery)
///   +2   4    window length, seconds (uint32)
///   +6   4    sample count (uint32)
///   +10  4    minimum (float32)
///   +14  4    maximum (float32)
///   +18  4    mean    (float32)
///   +22  4    last    (float32)
/// ```
///
/// All little-endian; floats are IEEE 754 binary32 in the sensor's unit, NaN
/// when the window is empty.
public struct AggregatesSummary: Sendable, Hashable {
    /// The format version this build writes.
    public static let version: UInt8 = 1
    /// Bytes per record.
    public static let recordSize = 26

    /// One sensor's window.
    public struct Record: Sendable, Hashable {
        /// The sensor's index in the config.
        public var sensorIndex: UInt8
        /// The kind's code (``SensorKind/code``).
        public var kind: UInt8
        /// The window length in seconds.
        public var windowSeconds: UInt32
        /// How many samples.
        public var count: UInt32
        /// Minimum, NaN when empty.
        public var minimum: Float
        /// Maximum, NaN when empty.
        public var maximum: Float
        /// Mean, NaN when empty.
        public var mean: Float
        /// Last value, NaN when empty.
        public var last: Float

        /// A record; see each property.
        public init(
            sensorIndex: UInt8, kind: UInt8, windowSeconds: UInt32, count: UInt32, minimum: Float, maximum: Float,
            mean: Float, last: Float
        ) {
            self.sensorIndex = sensorIndex
            self.kind = kind
            self.windowSeconds = windowSeconds
            self.count = count
            self.minimum = minimum
            self.maximum = maximum
            self.mean = mean
            self.last = last
        }

        /// The record of `summary` for the sensor at `index` of `kind`.
        public init(sensorIndex: UInt8, kind: SensorKind, summary: WindowSummary) {
            self.init(
                sensorIndex: sensorIndex, kind: kind.code,
                windowSeconds: UInt32(clamping: Int64(summary.windowSeconds.rounded())),
                count: UInt32(clamping: summary.count), minimum: Float(summary.minimum ?? .nan),
                maximum: Float(summary.maximum ?? .nan), mean: Float(summary.mean ?? .nan),
                last: Float(summary.last?.value ?? .nan))
        }

        /// Equality that treats NaN as equal to NaN (an empty window's fields).
        public static func == (lhs: Record, rhs: Record) -> Bool {
            lhs.sensorIndex == rhs.sensorIndex && lhs.kind == rhs.kind && lhs.windowSeconds == rhs.windowSeconds
                && lhs.count == rhs.count && lhs.minimum.bitPattern == rhs.minimum.bitPattern
                && lhs.maximum.bitPattern == rhs.maximum.bitPattern && lhs.mean.bitPattern == rhs.mean.bitPattern
                && lhs.last.bitPattern == rhs.last.bitPattern
        }

        /// Hashes the bit patterns, consistent with `==`.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(sensorIndex)
            hasher.combine(kind)
            hasher.combine(windowSeconds)
            hasher.combine(count)
            for value in [minimum, maximum, mean, last] { hasher.combine(value.bitPattern) }
        }
    }

    /// The records, in config order.
    public var records: [Record]

    /// A summary of `records`.
    public init(records: [Record]) {
        self.records = records
    }

    /// The summary of `state` at `now`, with kinds from `config`.
    public init(state: AggregateState, config: SensorAggregatorConfig, now: Double) {
        var records: [Record] = []
        for (index, sensor) in config.sensors.enumerated() {
            guard let summary = state.summary(of: sensor.id, now: now) else { continue }
            records.append(Record(sensorIndex: UInt8(clamping: index), kind: sensor.kind, summary: summary))
        }
        self.init(records: records)
    }

    /// The value's bytes (at most 255 records are written).
    public var bytes: [UInt8] {
        let written = records.prefix(255)
        var bytes: [UInt8] = [Self.version, UInt8(written.count)]
        for record in written {
            bytes += [record.sensorIndex, record.kind]
            bytes += record.windowSeconds.littleEndianBytes + record.count.littleEndianBytes
            for value in [record.minimum, record.maximum, record.mean, record.last] { bytes += value.littleEndianBytes }
        }
        return bytes
    }

    /// Decodes a Summary value (what a client does; used by tests).
    ///
    /// - Throws: ``AggregatesSummaryError`` for another version or a length
    ///   that does not match the record count.
    public static func decode(_ bytes: [UInt8]) throws(AggregatesSummaryError) -> AggregatesSummary {
        guard bytes.count >= 2 else { throw .tooShort(bytes.count) }
        guard bytes[0] == version else { throw .unsupportedVersion(bytes[0]) }
        let count = Int(bytes[1])
        guard bytes.count == 2 + count * recordSize else {
            throw .lengthMismatch(records: count, length: bytes.count)
        }
        var records: [Record] = []
        for index in 0..<count {
            let base = 2 + index * recordSize
            records.append(
                Record(
                    sensorIndex: bytes[base], kind: bytes[base + 1],
                    windowSeconds: UInt32(littleEndian: bytes, at: base + 2),
                    count: UInt32(littleEndian: bytes, at: base + 6),
                    minimum: Float(littleEndian: bytes, at: base + 10),
                    maximum: Float(littleEndian: bytes, at: base + 14), mean: Float(littleEndian: bytes, at: base + 18),
                    last: Float(littleEndian: bytes, at: base + 22)))
        }
        return AggregatesSummary(records: records)
    }
}

/// Why a Summary value could not be decoded.
public enum AggregatesSummaryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Fewer than the two header bytes.
    case tooShort(Int)
    /// A version other than 1.
    case unsupportedVersion(UInt8)
    /// The length is not `2 + 26 * records`.
    case lengthMismatch(records: Int, length: Int)

    /// One sentence.
    public var description: String {
        switch self {
        case .tooShort(let length): "a summary has at least 2 bytes, not \(length)"
        case .unsupportedVersion(let version): "summary version \(version) is not supported (only 1)"
        case .lengthMismatch(let records, let length):
            "a summary of \(records) records has \(2 + 26 * records) bytes, not \(length)"
        }
    }
}
