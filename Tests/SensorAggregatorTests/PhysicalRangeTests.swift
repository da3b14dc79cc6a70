import GATT
import JSON
import SensorAggregator
import Testing

/// Readings outside their kind's physical range are refused and counted,
/// so the characteristics and the Summary only ever carry finite values.
@Suite struct PhysicalRangeTests {
    @Test func extremeIngestValuesAreRefusedCountedAndLeaveEveryValueFinite() throws {
        var engine = SensorAggregatorEngine(config: try sampleConfig(), now: 1000)
        for line in [
            #"{"sensor":"baro","value":1e300}"#, #"{"sensor":"baro","value":-1}"#, #"{"sensor":"co2","value":-1e308}"#,
            #"{"sensor":"co2","value":3.5e38}"#,
        ] {
            _ = engine.ingest(Array(line.utf8), now: 1001)
        }
        #expect(engine.counters.rejections(.outOfRange) == 4)
        #expect(engine.counters.accepted == 0)
        _ = engine.ingest(Array(#"{"sensor":"baro","value":101325}"#.utf8), now: 1002)
        _ = engine.ingest(Array(#"{"sensor":"co2","value":3.4e38}"#.utf8), now: 1002)
        #expect(engine.counters.accepted == 2)
        #expect(try PressureValue(bytes: engine.read(.pressure, now: 1002) ?? []).pascals == 101_325)
        let summary = try AggregatesSummary.decode(
            engine.read(SensorAggregatorProfile.summaryCharacteristic, now: 1002) ?? [])
        for record in summary.records where record.count > 0 {
            let values = [record.minimum, record.maximum, record.mean, record.last]
            #expect(values.allSatisfy { $0.isFinite }, "record \(record.sensorIndex): \(values)")
        }
    }

    @Test func fileAndSimulatedReadingsAreCheckedToo() throws {
        var engine = SensorAggregatorEngine(config: try sampleConfig(), now: 0)
        _ = engine.record(SensorReading(sensor: "room", value: -300, time: 1), now: 1)
        _ = engine.record(SensorReading(sensor: "hum", value: 100.5, time: 1), now: 1)
        _ = engine.record(SensorReading(sensor: "hum", value: .nan, time: 1), now: 1)
        #expect(engine.refusedReadings == ["room": 1, "hum": 2])
        #expect(engine.read(.temperature, now: 1) == [0x00, 0x80], "still unknown")
    }

    @Test func eachKindHasItsRange() {
        #expect(SensorKind.temperature.physicalRange == -273.15...327.67)
        #expect(SensorKind.humidity.physicalRange == 0...100)
        #expect(SensorKind.battery.physicalRange == 0...100)
        #expect(SensorKind.pressure.physicalRange.contains(110_000))
        #expect(!SensorKind.generic.physicalRange.contains(.infinity))
        #expect(!SensorKind.generic.physicalRange.contains(-1e39))
    }
}
