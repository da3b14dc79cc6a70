import BLETesting
import GATT
import RoleKit
import SensorAggregator
import Testing

/// The engine end to end, with the time, the transport and the disk played
/// by the test.
@Suite struct EngineTests {
    typealias Engine = SensorAggregatorEngine

    static func notified(_ actions: [Engine.Action]) -> [NotificationPolicy.Notification] {
        actions.compactMap { if case .notify(let notification) = $0 { notification } else { nil } }
    }

    @Test func readingsReachSubscribersAndReads() throws {
        var engine = Engine(config: try sampleConfig(), now: 1000)
        // Before any reading, Temperature reads "unknown".
        #expect(engine.read(.temperature, now: 1000) == [0x00, 0x80])
        #expect(engine.servedCharacteristics.contains(.pressure))
        #expect(!engine.servedCharacteristics.contains(.batteryLevel))
        _ = engine.subscribe(central: "phone", characteristic: .temperature, now: 1000)
        let first = engine.record(SensorReading(sensor: "room", value: 21.5, time: 1001), now: 1001)
        #expect(Self.notified(first).map(\.value) == [[0x66, 0x08]])
        #expect(engine.read(.temperature, now: 1001) == [0x66, 0x08])
        // Below the 0.2 delta: nothing now.
        #expect(Self.notified(engine.record(SensorReading(sensor: "room", value: 21.6, time: 1002), now: 1002)).isEmpty)
        // Ingest lines for the pressure sensor, good and bad, counted.
        _ = engine.ingest(Array(#"{"sensor":"baro","value":101325}"#.utf8), now: 1003)
        _ = engine.ingest(Array(#"{"sensor":"baro","value":101325,"ts":10}"#.utf8), now: 1003)
        _ = engine.ingest(Array("garbage".utf8), now: 1003)
        #expect(engine.counters.accepted == 1)
        #expect(engine.counters.rejections(.outsideWindow) == 1)
        #expect(engine.counters.rejections(.notJSON) == 1)
        #expect(try PressureValue(bytes: engine.read(.pressure, now: 1003) ?? []).pascals == 101_325)
        #expect(engine.subscriptions.map(\.central) == ["phone"])
    }

    @Test func aThresholdCrossingIsAnEventAndAnUrgentNotification() throws {
        var engine = Engine(config: try sampleConfig(), now: 0)
        _ = engine.subscribe(central: "phone", characteristic: .temperature, now: 0)
        _ = engine.record(SensorReading(sensor: "room", value: 34.9, time: 1), now: 1)
        // 35.05 is only 0.15 above, below the delta, but crosses high = 35.
        let crossing = engine.record(SensorReading(sensor: "room", value: 35.05, time: 2), now: 2)
        #expect(crossing.contains(.threshold(sensor: "room", breach: .above, value: 35.05)))
        #expect(Self.notified(crossing).count == 1)
        let back = engine.record(SensorReading(sensor: "room", value: 34.0, time: 3), now: 3)
        #expect(back.contains(.threshold(sensor: "room", breach: nil, value: 34.0)))
    }

    @Test func configWritesApplyOrAreRefusedWithoutEffect() throws {
        var engine = Engine(config: try sampleConfig(), now: 0)
        let write = ConfigCharacteristicValue(
            windowSeconds: 60, intervalSeconds: 5, thresholds: [(2, Thresholds(high: 103_000))])
        #expect(throws: Never.self) { try engine.writeConfig(write.bytes, now: 1).get() }
        #expect(engine.config.windowSeconds == 60)
        #expect(engine.state.windows["room"]?.length == 60)
        #expect(
            engine.read(SensorAggregatorProfile.configCharacteristic, now: 1).map {
                try? ConfigCharacteristicValue.decode($0, sensorCount: 4)
            } == ConfigCharacteristicValue(config: engine.config))
        let bad = ConfigCharacteristicValue(windowSeconds: 0, intervalSeconds: 5).bytes
        let refused = engine.writeConfig(bad, now: 2)
        #expect(throws: ConfigWriteRefusal(.windowOutOfRange, "window 0 s is outside 1...604800 s")) {
            try refused.get()
        }
        #expect(engine.config.windowSeconds == 60)
    }

    @Test func tickFlushesAdvertisesAndRefreshesTheSummary() throws {
        var engine = Engine(config: try sampleConfig(), now: 0)
        #expect(engine.nextDeadline == nil)
        _ = engine.subscribe(central: "hub", characteristic: SensorAggregatorProfile.summaryCharacteristic, now: 0)
        _ = engine.record(SensorReading(sensor: "room", value: 23.14, time: 1), now: 1)
        _ = engine.record(SensorReading(sensor: "hum", value: 46.65, time: 1), now: 1)
        #expect(engine.nextDeadline == 10)
        let actions = engine.tick(now: 10)
        let summary = Self.notified(actions).first {
            $0.characteristic == SensorAggregatorProfile.summaryCharacteristic
        }
        #expect(try AggregatesSummary.decode(summary?.value ?? []).records.map(\.count) == [1, 1, 0, 0])
        let plans = actions.compactMap { if case .advertise(let plan) = $0 { plan } else { nil } }
        #expect(plans.count == 1)
        let payload = try AdvertisingData.parse(plans.first?.bytes ?? []).serviceData[.bthome] ?? []
        #expect(try BTHomeServiceData.decode(payload).objects.map(\.value) == [23.14, 46.65])
        #expect(!actions.contains(.flush))
        #expect(engine.nextDeadline == 20)
        #expect(engine.tick(now: 31).contains(.flush))
        engine.flushed(at: 31)
        #expect(!engine.tick(now: 62).contains(.flush))
    }

    /// Killed after a flush and started again: the windows come back.
    @Test func aRestartWithTheSnapshotServesTheSameAggregates() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = AggregateSnapshotStore(
            store: PluginStateStore(directory: directory.path), logger: LogRecorder().logger)
        var engine = Engine(config: try sampleConfig(), now: 0)
        for second in 1...20 {
            _ = engine.record(
                SensorReading(sensor: "room", value: 20 + Double(second) / 10, time: Double(second)),
                now: Double(second))
        }
        try await store.save(engine.state, now: 20)
        let before = engine.read(SensorAggregatorProfile.summaryCharacteristic, now: 25)

        var restarted = Engine(config: try sampleConfig(), now: 25)
        var restored = restarted.state
        #expect(await store.load(into: &restored, now: 25) == .restored(skippedSensors: []))
        restarted.adopt(restored: restored, now: 25)
        #expect(restarted.read(SensorAggregatorProfile.summaryCharacteristic, now: 25) == before)
        #expect(restarted.read(.temperature, now: 25) == [0x98, 0x08])  // 2200: 22.00 °C
    }
}
