import GATT
import SensorAggregator
import Testing

@Suite struct SummaryFormatTests {
    /// The fixture in docs/profiles/sensor-aggregator.md.
    @Test func summaryBytesMatchTheDocumentedFixture() throws {
        let summary = AggregatesSummary(records: [
            .init(sensorIndex: 0, kind: 1, windowSeconds: 300, count: 4, minimum: 18, maximum: 24, mean: 21, last: 24),
            .init(
                sensorIndex: 1, kind: 2, windowSeconds: 300, count: 0, minimum: .nan, maximum: .nan, mean: .nan,
                last: .nan),
        ])
        let expected: [UInt8] = [
            0x01, 0x02,  // version 1, 2 records
            0x00, 0x01,  // sensor 0, temperature
            0x2C, 0x01, 0x00, 0x00,  // window 300 s
            0x04, 0x00, 0x00, 0x00,  // 4 samples
            0x00, 0x00, 0x90, 0x41,  // min 18.0
            0x00, 0x00, 0xC0, 0x41,  // max 24.0
            0x00, 0x00, 0xA8, 0x41,  // mean 21.0
            0x00, 0x00, 0xC0, 0x41,  // last 24.0
            0x01, 0x02,  // sensor 1, humidity
            0x2C, 0x01, 0x00, 0x00,  // window 300 s
            0x00, 0x00, 0x00, 0x00,  // empty
            0x00, 0x00, 0xC0, 0x7F, 0x00, 0x00, 0xC0, 0x7F, 0x00, 0x00, 0xC0, 0x7F, 0x00, 0x00, 0xC0, 0x7F,  // NaN x4
        ]
        #expect(summary.bytes == expected)
        #expect(try AggregatesSummary.decode(expected) == summary)
    }

    @Test func summaryOfLiveStateFollowsConfigOrder() throws {
        let config = try sampleConfig()
        var state = AggregateState(sensorIDs: config.sensors.map(\.id), windowSeconds: 300, capacity: 100)
        _ = state.record(SensorReading(sensor: "room", value: 21.5, time: 10), now: 10)
        _ = state.record(SensorReading(sensor: "baro", value: 101_325, time: 11), now: 11)
        let decoded = try AggregatesSummary.decode(AggregatesSummary(state: state, config: config, now: 12).bytes)
        #expect(decoded.records.map(\.sensorIndex) == [0, 1, 2, 3])
        #expect(decoded.records.map(\.kind) == [1, 2, 3, 0])
        #expect(decoded.records.map(\.count) == [1, 0, 1, 0])
        #expect(decoded.records[0].last == 21.5)
        #expect(decoded.records[2].mean == 101_325)
    }

    @Test func malformedSummariesAreRefused() {
        #expect(throws: AggregatesSummaryError.tooShort(1)) { try AggregatesSummary.decode([0x01]) }
        #expect(throws: AggregatesSummaryError.unsupportedVersion(2)) { try AggregatesSummary.decode([0x02, 0x00]) }
        #expect(throws: AggregatesSummaryError.lengthMismatch(records: 1, length: 27)) {
            try AggregatesSummary.decode([0x01, 0x01] + [UInt8](repeating: 0, count: 25))
        }
    }
}

@Suite struct ConfigCharacteristicTests {
    /// The fixture in docs/profiles/sensor-aggregator.md.
    static let fixture: [UInt8] = [
        0x01,  // version 1
        0x58, 0x02, 0x00, 0x00,  // window 600 s
        0x05, 0x00,  // interval 5 s
        0x01,  // one threshold
        0x00,  // sensor 0
        0x00, 0x00, 0xA0, 0x40,  // low 5.0
        0x00, 0x00, 0xC0, 0x7F,  // high: none (NaN)
    ]

    @Test func aValidWriteDecodesAndApplies() throws {
        let value = try ConfigCharacteristicValue.decode(Self.fixture, sensorCount: 4)
        #expect(value.windowSeconds == 600)
        #expect(value.intervalSeconds == 5)
        #expect(value.thresholds.map(\.sensorIndex) == [0])
        #expect(value.thresholds.first?.thresholds == Thresholds(low: 5, high: nil))
        #expect(value.bytes == Self.fixture)
        let applied = value.applied(to: try sampleConfig())
        #expect(applied.windowSeconds == 600)
        #expect(applied.notification.intervalSeconds == 5)
        #expect(applied.sensors[0].thresholds == Thresholds(low: 5))
        // Reading the Config characteristic gives back what was applied.
        #expect(ConfigCharacteristicValue(config: applied) == value)
    }

    /// Each invalid write is refused with its application error code and a
    /// reason for the log; nothing is applied.
    @Test func invalidWritesAreRefusedWithApplicationErrors() {
        func refusal(_ bytes: [UInt8]) -> ConfigWriteRefusal? {
            do {
                _ = try ConfigCharacteristicValue.decode(bytes, sensorCount: 4)
                return nil
            } catch {
                return error
            }
        }
        let header: [UInt8] = [0x01, 0x2C, 0x01, 0x00, 0x00, 0x0A, 0x00]
        let float5: [UInt8] = [0x00, 0x00, 0xA0, 0x40]
        let float1: [UInt8] = [0x00, 0x00, 0x80, 0x3F]
        let infinity: [UInt8] = [0x00, 0x00, 0x80, 0x7F]
        let cases: [([UInt8], ConfigWriteRefusal.Reason, UInt8)] = [
            ([], .invalidLength, 0x81),
            ([0x02] + header.dropFirst() + [0], .unsupportedVersion, 0x80),
            (header, .invalidLength, 0x81),
            (header + [0x01], .invalidLength, 0x81),
            ([0x01, 0x00, 0x00, 0x00, 0x00, 0x0A, 0x00, 0x00], .windowOutOfRange, 0x82),
            ([0x01, 0x81, 0x3A, 0x09, 0x00, 0x0A, 0x00, 0x00], .windowOutOfRange, 0x82),
            ([0x01, 0x2C, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00], .intervalOutOfRange, 0x83),
            ([0x01, 0x2C, 0x01, 0x00, 0x00, 0x11, 0x0E, 0x00], .intervalOutOfRange, 0x83),
            (header + [0x01, 0x04] + float1 + float5, .unknownSensor, 0x84),
            (header + [0x01, 0x00] + float5 + float1, .invalidThreshold, 0x85),
            (header + [0x01, 0x00] + infinity + float5, .invalidThreshold, 0x85),
            (header + [0x02, 0x00] + float1 + float5 + [0x00] + float1 + float5, .duplicateSensor, 0x86),
        ]
        for (bytes, reason, code) in cases {
            let refused = refusal(bytes)
            #expect(refused?.reason == reason, "\(bytes)")
            #expect(refused?.attError == ATTError(code))
            #expect(refused?.attError.isApplicationError == true)
            #expect(refused?.description.hasPrefix("Config write refused (Application Error (") == true)
        }
    }
}
