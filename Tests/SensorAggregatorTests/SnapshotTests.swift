import BLETesting
import RoleKit
import SensorAggregator
import Testing

@Suite struct SnapshotTests {
    @Test func aSnapshotRoundTripsThroughTheStateDirectory() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let log = LogRecorder()
        let store = AggregateSnapshotStore(store: PluginStateStore(directory: directory.path), logger: log.logger)
        var state = AggregateState(sensorIDs: ["room", "hum"], windowSeconds: 300, capacity: 100)
        for (index, value) in [21.25, 21.5, -3.125, 0.1].enumerated() {
            _ = state.record(SensorReading(sensor: "room", value: value, time: 1000.5 + Double(index)), now: 1004)
        }
        _ = state.record(SensorReading(sensor: "hum", value: 45.67, time: 1003.25), now: 1004)
        try await store.save(state, now: 1004)

        var restored = AggregateState(sensorIDs: ["room", "hum"], windowSeconds: 300, capacity: 100)
        let outcome = await store.load(into: &restored, now: 1004)
        #expect(outcome == .restored(skippedSensors: []))
        #expect(restored == state)
        #expect(restored.summary(of: "room", now: 1004) == state.summary(of: "room", now: 1004))
    }

    @Test func restoringKeepsOnlyConfiguredSensorsAndLiveSamples() throws {
        var old = AggregateState(sensorIDs: ["gone", "room"], windowSeconds: 300, capacity: 100)
        _ = old.record(SensorReading(sensor: "gone", value: 1, time: 1000), now: 1000)
        _ = old.record(SensorReading(sensor: "room", value: 20, time: 1000), now: 1000)
        _ = old.record(SensorReading(sensor: "room", value: 21, time: 1200), now: 1200)
        let bytes = AggregateSnapshot.encode(old, now: 1200)
        var state = AggregateState(sensorIDs: ["room"], windowSeconds: 300, capacity: 100)
        // Restarted at 1350: the sample at 1000 is more than 300 s old.
        let skipped = try AggregateSnapshot.restore(bytes, into: &state, now: 1350)
        #expect(skipped == ["gone"])
        #expect(state.windows["room"]?.samples == [Sample(time: 1200, value: 21)])
    }

    /// A torn write (impossible with rename, but a disk can lie) and foreign
    /// bytes are set aside, logged, and never deleted; the plugin starts empty.
    @Test func anUnreadableSnapshotIsSetAsideNotDeleted() async throws {
        let cases: [(String, String)] = [
            ("{\"format\":\"bleagent.sensor-aggregates\",\"version\":1,\"sens", "not JSON"),
            ("[1,2,3]", "malformed"),
            ("{\"format\":\"bleagent.sensor-aggregates\",\"version\":9,\"sensors\":{}}", "version 9"),
            ("{\"format\":\"bleagent.sensor-aggregates\",\"version\":1,\"sensors\":{\"room\":[[1,\"x\"]]}}", "room[0]"),
        ]
        for (contents, reason) in cases {
            let directory = TemporaryDirectory()
            defer { directory.remove() }
            directory.write(AggregateSnapshotStore.fileName, contents)
            let log = LogRecorder()
            let store = AggregateSnapshotStore(store: PluginStateStore(directory: directory.path), logger: log.logger)
            var state = AggregateState(sensorIDs: ["room"], windowSeconds: 300, capacity: 100)
            let outcome = await store.load(into: &state, now: 1_700_000_000)
            guard case .setAside(let name, let why) = outcome else {
                Issue.record("expected set-aside, got \(outcome)")
                continue
            }
            #expect(name == "aggregates.json.corrupt-1700000000")
            #expect(why.contains(reason))
            #expect(outcome.mayFlush)
            #expect(state.windows["room"]?.samples.isEmpty == true)
            #expect(directory.entries() == [name])
            #expect(try await PluginStateStore(directory: directory.path).read(name) == Array(contents.utf8))
            #expect(log.all.contains { $0.hasPrefix("error: aggregates snapshot unreadable") && $0.contains(name) })
            // A second bad snapshot at the same second does not replace the first.
            directory.write(AggregateSnapshotStore.fileName, "junk")
            let again = await store.load(into: &state, now: 1_700_000_000)
            #expect(again.mayFlush)
            #expect(directory.entries() == [name, name + "-1"])
        }
    }

    @Test func noSnapshotIsAFirstStart() async {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = AggregateSnapshotStore(
            store: PluginStateStore(directory: directory.path), logger: LogRecorder().logger)
        var state = AggregateState(sensorIDs: ["room"], windowSeconds: 300, capacity: 100)
        let outcome = await store.load(into: &state, now: 1)
        #expect(outcome == .noSnapshot)
    }

    /// The schedule bounds what a SIGKILL can lose to one flush interval.
    @Test func flushIsDueOneIntervalAfterTheFirstUnsavedChange() {
        var schedule = FlushSchedule(interval: 30, now: 1000)
        #expect(schedule.nextDeadline == nil)
        #expect(!schedule.isDue(now: 5000))
        schedule.markDirty()
        #expect(schedule.nextDeadline == 1030)
        #expect(!schedule.isDue(now: 1029.9))
        #expect(schedule.isDue(now: 1030))
        schedule.flushed(at: 1031)
        #expect(schedule.nextDeadline == nil)
        schedule.markDirty()
        #expect(schedule.nextDeadline == 1061)
    }
}
