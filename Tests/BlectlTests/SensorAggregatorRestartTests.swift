import BLETesting
import Glibc
import JSON
import Testing

/// Aggregates across restarts of the real agent on its embedded blesim: a
/// SIGKILL loses only what came after the last flush, a SIGTERM loses nothing.
@Suite("SensorAggregator restarts with persisted aggregates", .serialized, .timeLimit(.minutes(3)))
struct SensorAggregatorRestartTests {
    static let sensors = """
        { "id": "room", "kind": "temperature", "source": { "type": "ingest" }, "thresholds": { "high": 30 } },
        { "id": "hum", "kind": "humidity", "source": { "type": "ingest" } }
        """

    /// count, min, max, mean and last of `values`.
    static func aggregates(_ values: [Double]) -> (count: Int, min: Double, max: Double, mean: Double, last: Double) {
        (
            values.count, values.min() ?? .nan, values.max() ?? .nan, values.reduce(0, +) / Double(values.count),
            values.last ?? .nan
        )
    }

    /// Whether `window` (a `sensors.readings` entry) holds exactly the aggregates of `values`.
    static func holds(_ window: JSON?, _ values: [Double]) -> Bool {
        let expected = aggregates(values)
        guard let window, window["count"]?.intValue.map(Int.init) == expected.count,
            let mean = window["mean"]?.doubleValue
        else { return false }
        return window["min"]?.doubleValue == expected.min && window["max"]?.doubleValue == expected.max
            && abs(mean - expected.mean) < 1e-9 && window["last"]?.doubleValue == expected.last
    }

    @Test(
        "readings, a flushed event, SIGKILL: the restarted agent restores every flushed reading (count/min/max/mean/last of a prefix of what was sent); more readings, SIGTERM: the next start restores all of them"
    )
    func restartKeepsAggregates() async throws {
        let base = makeTemporaryDirectory()
        defer { removeTree(base) }
        let ingest = "\(base)/ingest.sock"
        let config = SensorAgent.config(
            scenario: "\(repositoryRoot)/sim/scenarios/default.json", ingest: ingest, sensors: Self.sensors,
            extra: #""flushSeconds": 1,"#)
        let room = "{\"sensor\": \"room\", \"value\": "

        // First run: three temperatures and a humidity, flushed (an event carrying the sample count).
        var sent: [Double] = []
        let flushedRoom = 3
        do {
            let agent = try await RunningAgent(config: config, directory: base)
            let children = await SensorAgent.simPIDs(agent)
            let events = try await SensorAgent.pluginEvents(agent)
            defer {
                events.signal(SIGKILL)
            }
            for value in [20.0, 21.0, 22.5] {
                SensorAgent.send(ingest, room + "\(value)}")
                sent.append(value)
            }
            SensorAgent.send(ingest, #"{"sensor": "hum", "value": 40}"#)
            let flushed = await SensorAgent.next("flushed", on: events) { $0["samples"]?.intValue == 4 }
            #expect(flushed != nil, "a flush of all four samples")
            // Two more; 35 breaches the threshold, so its event says both were recorded. Then the crash.
            for value in [23.0, 35.0] {
                SensorAgent.send(ingest, room + "\(value)}")
                sent.append(value)
            }
            #expect(await SensorAgent.next("threshold", on: events) { $0["breach"] == "above" } != nil)
            await SensorAgent.crash(agent, children: children)
        }

        // Second run: what the last flush saved is back (the two last readings only if a flush beat the kill).
        var restored: [Double] = []
        do {
            let agent = try await RunningAgent(config: config, directory: base)
            #expect(await agent.child.waitForStderr(containing: "restored "))
            let readings = try await SensorAgent.call(agent, "sensors.readings")
            let count = Int(readings["sensors"]?[0]?["count"]?.intValue ?? 0)
            #expect((flushedRoom...sent.count).contains(count), "\(readings)")
            restored = Array(sent.prefix(count))
            #expect(Self.holds(readings["sensors"]?[0], restored), "room: the first \(count) readings: \(readings)")
            #expect(Self.holds(readings["sensors"]?[1], [40]), "hum: \(readings)")
            print("SIGKILL after \(sent.count) readings of room (\(flushedRoom) flushed): \(count) restored")

            // A clean stop loses nothing: two more readings (36 breaches again: a fresh threshold monitor).
            let events = try await SensorAgent.pluginEvents(agent)
            defer {
                events.signal(SIGKILL)
            }
            for value in [24.0, 36.0] {
                SensorAgent.send(ingest, room + "\(value)}")
                restored.append(value)
            }
            #expect(await SensorAgent.next("threshold", on: events) { $0["breach"] == "above" } != nil)
            let stopped = await agent.stop()
            #expect(stopped.status == 0, "\(stopped.stderr)")
        }

        // Third run: everything the second run held.
        let agent = try await RunningAgent(config: config, directory: base)
        let readings = try await SensorAgent.call(agent, "sensors.readings")
        #expect(Self.holds(readings["sensors"]?[0], restored), "room: \(restored): \(readings)")
        #expect(Self.holds(readings["sensors"]?[1], [40]), "hum: \(readings)")
        #expect(await agent.stop().status == 0)
    }
}
