import BLETesting
import Glibc
import JSON
import Testing

/// Ingest values outside their kind's physical range are refused and counted.
@Suite("SensorAggregator refuses physically impossible values", .serialized, .timeLimit(.minutes(3)))
struct IngestRangeProcessTests {
    @Test("temperature -1e308 and battery 1e300 are counted as outOfRange; readings stay finite")
    func outOfRange() async throws {
        let data = makeTemporaryDirectory()
        defer { removeTree(data) }
        let ingest = "\(data)/ingest.sock"
        let agent = try await RunningAgent(
            config: SensorAgent.config(
                scenario: "\(repositoryRoot)/sim/scenarios/default.json", ingest: ingest,
                sensors: """
                    { "id": "room", "kind": "temperature", "source": { "type": "ingest" }, "thresholds": { "high": 30 } },
                    { "id": "bat", "kind": "battery", "source": { "type": "ingest" } },
                    { "id": "hum", "kind": "humidity", "source": { "type": "ingest" } }
                    """))
        let events = try await SensorAgent.pluginEvents(agent)
        defer { events.signal(SIGKILL) }
        for line in [
            #"{"sensor":"room","value":-1e308}"#, #"{"sensor":"bat","value":1e300}"#,
            #"{"sensor":"hum","value":101}"#, #"{"sensor":"room","value":-274}"#, #"{"sensor":"bat","value":-1}"#,
            #"{"sensor":"bat","value":80}"#, #"{"sensor":"room","value":35}"#,
        ] {
            SensorAgent.send(ingest, line)
        }
        #expect(await SensorAgent.next("threshold", on: events) != nil)
        let stats = try await SensorAgent.call(agent, "sensors.ingest-stats")
        #expect(stats["rejected"]?["outOfRange"] == 5, "\(stats)")
        #expect(stats["accepted"] == 2, "\(stats)")
        let readings = try await SensorAgent.call(agent, "sensors.readings")
        let room = readings["sensors"]?.arrayValue?.first { $0["id"] == "room" }
        #expect(room?["min"] == 35.0 && room?["max"] == 35.0, "\(readings)")
        #expect(await agent.stop().status == 0)
    }
}
