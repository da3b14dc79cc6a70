import SensorAggregator
import Testing

/// Time is whatever the test says: the window never reads a clock.
@Suite struct RollingWindowTests {
    @Test func statisticsOfTheSamplesInsideTheWindow() {
        var window = RollingWindow(length: 60, capacity: 100)
        for (time, value) in [(1000.0, 20.0), (1010, 22), (1020, 18), (1030, 24)] {
            let kept = window.add(Sample(time: time, value: value), now: time)
            #expect(kept)
        }
        let summary = window.summary(now: 1030)
        #expect(summary.count == 4)
        #expect(summary.minimum == 18)
        #expect(summary.maximum == 24)
        #expect(summary.mean == 21)
        #expect(summary.last == Sample(time: 1030, value: 24))
        #expect(summary.windowSeconds == 60)
    }

    @Test func samplesLeaveTheWindowAsTheClockAdvances() {
        var window = RollingWindow(length: 60, capacity: 100)
        window.add(Sample(time: 1000, value: 20), now: 1000)
        window.add(Sample(time: 1030, value: 30), now: 1030)
        // At 1060 the first sample is exactly `length` old: out.
        let later = window.summary(now: 1060)
        #expect(later.count == 1)
        #expect(later.minimum == 30)
        #expect(window.summary(now: 1091).count == 0)
        #expect(window.summary(now: 1091).mean == nil)
        window.expire(now: 1091)
        #expect(window.samples.isEmpty)
    }

    @Test func aLateSampleIsInsertedInTimeOrderAndAStaleOneRefused() {
        var window = RollingWindow(length: 60, capacity: 100)
        window.add(Sample(time: 1010, value: 1), now: 1010)
        window.add(Sample(time: 1030, value: 3), now: 1030)
        let late = window.add(Sample(time: 1020, value: 2), now: 1030)
        #expect(late)
        #expect(window.samples.map(\.value) == [1, 2, 3])
        #expect(window.summary(now: 1030).last?.value == 3)
        let stale = window.add(Sample(time: 960, value: 9), now: 1030)
        let notANumber = window.add(Sample(time: 1030, value: .nan), now: 1030)
        #expect(!stale && !notANumber)
        #expect(window.samples.count == 3)
    }

    @Test func capacityBoundsMemoryByDroppingTheOldest() {
        var window = RollingWindow(length: 3600, capacity: 3)
        for second in 0..<5 { window.add(Sample(time: Double(second), value: Double(second)), now: Double(second)) }
        #expect(window.samples.map(\.value) == [2, 3, 4])
        #expect(window.droppedForCapacity == 2)
    }

    @Test func shorteningTheWindowDropsWhatFallsOutside() {
        var state = AggregateState(sensorIDs: ["a", "b"], windowSeconds: 300, capacity: 100)
        let outcomes = [
            state.record(SensorReading(sensor: "a", value: 1, time: 100), now: 100),
            state.record(SensorReading(sensor: "a", value: 2, time: 250), now: 250),
            state.record(SensorReading(sensor: "zz", value: 2, time: 250), now: 250),
            state.record(SensorReading(sensor: "b", value: 2, time: -100), now: 250),
        ]
        #expect(outcomes == [.recorded, .recorded, .unknownSensor, .outsideWindow])
        state.setWindowLength(60, now: 260)
        #expect(state.summary(of: "a", now: 260)?.count == 1)
        #expect(state.summaries(now: 260).map(\.sensor) == ["a", "b"])
    }
}
