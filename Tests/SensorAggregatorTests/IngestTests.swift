import SensorAggregator
import Testing

@Suite struct IngestTests {
    let parser = IngestLineParser(units: ["baro": "Pa", "co2": "ppm"], maxLineBytes: 128)

    func parse(_ text: String, now: Double = 1_700_000_000) -> Result<SensorReading, IngestRejection> {
        parser.parse(Array(text.utf8), now: now)
    }

    @Test func aGoodLineBecomesAReading() {
        #expect(
            parse(#"{"sensor": "baro", "value": 101325.5, "unit": "Pa", "ts": 1699999999.5}"# + "\n")
                == .success(SensorReading(sensor: "baro", value: 101_325.5, time: 1_699_999_999.5)))
        // No ts: the time of arrival. Integers are numbers; extra members ignored.
        #expect(
            parse(#"{"sensor":"co2","value":415,"from":"probe-7"}"# + "\r\n")
                == .success(SensorReading(sensor: "co2", value: 415, time: 1_700_000_000)))
    }

    /// Every kind of bad line is refused with its own reason, and counted.
    @Test func eachMalformedLineIsCountedByReason() {
        let lines: [(String, IngestRejection)] = [
            (String(repeating: " ", count: 129), .tooLong),
            ("\n", .empty),
            ("{\"sensor\": \"baro\", ", .notJSON),
            ("\u{FF}", .notJSON),
            ("[1, 2]", .notAnObject),
            (#"{"value": 1}"#, .missingSensor),
            (#"{"sensor": 7, "value": 1}"#, .badSensor),
            (#"{"sensor": "kitchen", "value": 1}"#, .unknownSensor),
            (#"{"sensor": "baro"}"#, .missingValue),
            (#"{"sensor": "baro", "value": "high"}"#, .badValue),
            (#"{"sensor": "baro", "value": 1, "unit": 5}"#, .badUnit),
            (#"{"sensor": "baro", "value": 1, "unit": "hPa"}"#, .unitMismatch),
            (#"{"sensor": "baro", "value": 1, "ts": "yesterday"}"#, .badTimestamp),
            (#"{"sensor": "baro", "value": 1, "ts": -5}"#, .badTimestamp),
            (#"{"sensor": "baro", "value": 1, "ts": 1700000061}"#, .futureTimestamp),
        ]
        var counters = IngestCounters()
        for (line, reason) in lines {
            let result = parse(line)
            #expect(result == .failure(reason), "\(line)")
            switch result {
            case .success: counters.countAccepted()
            case .failure(let rejection): counters.count(rejection)
            }
        }
        #expect(counters.accepted == 0)
        #expect(counters.totalRejected == lines.count)
        #expect(counters.rejections(.notJSON) == 2)
        #expect(counters.rejections(.badTimestamp) == 2)
        #expect(counters.rejections(.unitMismatch) == 1)
        #expect(counters.rejections(.outsideWindow) == 0)
    }

    @Test func theConfigDecidesWhichSensorsTakeIngestLines() throws {
        let parser = IngestLineParser(config: try sampleConfig())
        #expect(parser.units == ["baro": "Pa", "co2": "ppm"])
        #expect(parser.maxLineBytes == 1024)
        // "room" is a file sensor: lines for it are refused.
        #expect(parser.parse(Array(#"{"sensor":"room","value":1}"#.utf8), now: 1) == .failure(.unknownSensor))
    }
}
