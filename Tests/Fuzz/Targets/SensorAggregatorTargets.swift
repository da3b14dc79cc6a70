import SensorAggregator

/// The sensor aggregator's text inputs: ingest datagrams (JSON lines from
/// other processes) and the contents of sensor files (hwmon, IIO).
///
/// Checks: an accepted reading names a configured ingest sensor, has a
/// finite value and a timestamp not beyond the allowed skew; a sensor file
/// number is finite.
enum AggregatorTextTarget {
    static let target = FuzzTarget(
        name: "aggregator-text", summary: "sensor aggregator: ingest lines and sensor file contents",
        seeds: { seeds }, body: run)

    static let parser = IngestLineParser(units: ["baro": "Pa", "co2": "ppm", "room": "degC"], maxLineBytes: 1024)
    static let now = 1_700_000_000.0

    static func run(_ input: [UInt8]) throws(FuzzFinding) {
        if case .success(let reading) = parser.parse(input, now: now) {
            try require(parser.units[reading.sensor] != nil, "a reading for the unknown sensor \(reading.sensor)")
            try require(reading.value.isFinite, "a non-finite reading \(reading) from \(input)")
            try require(
                reading.time.isFinite && reading.time > 0 && reading.time <= now + IngestLineParser.maximumFutureSkew,
                "a reading at \(reading.time) from \(input)")
        }
        if let number = try? SensorFileParser.number(in: input) {
            try require(number.isFinite, "sensor file \(input) read as \(number)")
        }
    }

    static let seeds: [[UInt8]] = [
        #"{"sensor": "baro", "value": 101325.5, "unit": "Pa", "ts": 1699999999.5}"# + "\n",
        #"{"sensor":"co2","value":415,"from":"probe-7"}"# + "\r\n",
        #"{"sensor": "room", "value": -1e308}"#,
        #"{"sensor": "baro", "value": 1, "ts": 1700000061}"#,
        #"{"sensor": 7, "value": "high", "unit": null}"#,
        "23500\n", "-12.5e-3", "  +7 \n", "0x1F", "inf",
    ].map(\.bytes)
}

/// A central's write to the aggregator's Config characteristic.
///
/// Checks: an accepted write lists only configured sensors, once each, with
/// valid limits, and reads back the same after encoding.
enum AggregatorConfigWriteTarget {
    static let target = FuzzTarget(
        name: "aggregator-config-write", summary: "sensor aggregator: Config characteristic writes",
        seeds: { seeds }, body: run)

    static let sensorCount = 4

    static func run(_ input: [UInt8]) throws(FuzzFinding) {
        guard let value = try? ConfigCharacteristicValue.decode(input, sensorCount: sensorCount) else { return }
        let indexes = value.thresholds.map(\.sensorIndex)
        try require(
            indexes.allSatisfy { Int($0) < sensorCount } && Set(indexes).count == indexes.count,
            "accepted sensor indexes \(indexes) with \(sensorCount) sensors")
        try require(value.thresholds.allSatisfy { $0.thresholds.isValid }, "accepted limits \(value.thresholds)")
        let again: ConfigCharacteristicValue
        do {
            again = try ConfigCharacteristicValue.decode(value.bytes, sensorCount: sensorCount)
        } catch {
            throw FuzzFinding("\(value), accepted from \(input), encodes as \(value.bytes), which is refused: \(error)")
        }
        try require(again == value, "\(value) encodes as \(value.bytes), which reads back as \(again)")
    }

    static let seeds: [[UInt8]] = [
        ConfigCharacteristicValue(windowSeconds: 300, intervalSeconds: 10).bytes,
        ConfigCharacteristicValue(
            windowSeconds: 604_800, intervalSeconds: 3600,
            thresholds: [(0, Thresholds(low: 5, high: 35)), (3, Thresholds(high: 80))]
        ).bytes,
        [0x01, 0x00, 0x00, 0x00, 0x00, 0x0A, 0x00, 0x00],
        [0x02],
    ]
}
