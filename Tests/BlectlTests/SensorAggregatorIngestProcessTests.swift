import BLETesting
import Glibc
import JSON
import Testing

/// The running agent's ingest socket under bad input: every malformed
/// datagram is counted under its reason and logged, the agent lives on, and
/// the good lines after them are taken.
@Suite("SensorAggregator ingest on the running agent", .serialized, .timeLimit(.minutes(3)))
struct SensorAggregatorIngestProcessTests {
    static let sensors = """
        { "id": "room", "kind": "temperature", "source": { "type": "ingest" }, "thresholds": { "high": 30 } },
        { "id": "co2", "kind": "generic", "unit": "ppm", "source": { "type": "ingest" } }
        """

    /// One datagram per reason (two not JSON), in the order sent.
    static let badLines: [(reason: String, bytes: [UInt8])] = [
        ("notJSON", Array("not json".utf8)),
        ("notJSON", [0xFF, 0xFE, 0x7B]),
        ("empty", []),
        ("empty", Array("\n".utf8)),
        ("notAnObject", Array("[1, 2]".utf8)),
        ("missingSensor", Array(#"{"value": 21}"#.utf8)),
        ("badSensor", Array(#"{"sensor": 7, "value": 21}"#.utf8)),
        ("unknownSensor", Array(#"{"sensor": "attic", "value": 21}"#.utf8)),
        ("missingValue", Array(#"{"sensor": "room"}"#.utf8)),
        ("badValue", Array(#"{"sensor": "room", "value": "hot"}"#.utf8)),
        ("badUnit", Array(#"{"sensor": "co2", "value": 400, "unit": 5}"#.utf8)),
        ("unitMismatch", Array(#"{"sensor": "room", "value": 21, "unit": "degF"}"#.utf8)),
        ("badTimestamp", Array(#"{"sensor": "room", "value": 21, "ts": "now"}"#.utf8)),
        ("futureTimestamp", Array(#"{"sensor": "room", "value": 21, "ts": 99999999999}"#.utf8)),
        ("outsideWindow", Array(#"{"sensor": "room", "value": 21, "ts": 1000}"#.utf8)),
        // 60,000 bytes: past maxLineBytes (1024); the socket hands over 1025 of them.
        (
            "tooLong",
            Array(#"{"sensor": "room", "value": 21, "pad": ""#.utf8) + Array(repeating: 0x78, count: 59_955)
                + Array(#""}"#.utf8)
        ),
    ]

    @Test(
        "bad ingest datagrams (not JSON, empty, missing fields, wrong types, unknown sensor, bad timestamps, 60 kB) are counted per reason in sensors.ingest-stats and logged; the agent lives on and the good lines after them are taken"
    )
    func malformedLines() async throws {
        let data = makeTemporaryDirectory()
        defer { removeTree(data) }
        let ingest = "\(data)/ingest.sock"
        let agent = try await RunningAgent(
            config: SensorAgent.config(
                scenario: "\(repositoryRoot)/sim/scenarios/default.json", ingest: ingest, sensors: Self.sensors))
        let events = try await SensorAgent.pluginEvents(agent)
        defer {
            events.signal(SIGKILL)
        }

        for (_, bytes) in Self.badLines {
            #expect(SensorAgent.send(ingest, bytes) == bytes.count, "the socket takes the datagram whole")
        }
        // Good lines after the bad ones: 35 breaches the high threshold, 21.5 is back within it (events,
        // published in the order the one ingest stream handled the lines).
        SensorAgent.send(ingest, #"{"sensor": "room", "value": 35, "unit": "degC"}"# + "\n")
        SensorAgent.send(ingest, #"{"sensor": "co2", "value": 415}"#)
        SensorAgent.send(ingest, #"{"sensor": "room", "value": 21.5}"#)
        let breach = await SensorAgent.next("threshold", on: events)
        #expect(
            breach?["sensor"] == "room" && breach?["breach"] == "above" && breach?["value"]?.doubleValue == 35,
            "\(String(describing: breach))")
        let back = await SensorAgent.next("threshold", on: events)
        #expect(
            back?["sensor"] == "room" && back?["breach"] == .null && back?["value"]?.doubleValue == 21.5,
            "\(String(describing: back))")

        // The counters, whole, through blectl.
        let stats = try await blectl(["--socket", agent.socketPath, "--json", "call", "sensors.ingest-stats"])
        #expect(
            stats.stdout
                == #"{"accepted":3,"rejectedTotal":16,"rejected":{"tooLong":1,"empty":2,"notJSON":2,"notAnObject":1,"missingSensor":1,"badSensor":1,"unknownSensor":1,"missingValue":1,"badValue":1,"badUnit":1,"unitMismatch":1,"badTimestamp":1,"futureTimestamp":1,"outsideWindow":1,"outOfRange":0},"overflowed":0,"refusedUpdates":0}"#
                + "\n", "\(stats)")
        let readings = try await SensorAgent.call(agent, "sensors.readings")
        let room = readings["sensors"]?[0]
        #expect(
            room?["count"] == 2 && room?["max"]?.doubleValue == 35 && room?["last"]?.doubleValue == 21.5,
            "\(readings)")
        #expect(readings["sensors"]?[1]?["last"]?.doubleValue == 415, "\(readings)")

        // Logged: the 1st and 2nd of each reason, with the line's start (80 bytes at most).
        for expected in [
            "ingest: bad line (notJSON, 1 so far): not json", "ingest: bad line (notJSON, 2 so far): ",
            "ingest: bad line (empty, 2 so far): ",
            "ingest: bad line (unknownSensor, 1 so far): {\"sensor\": \"attic\"",
            // The first 80 bytes: the 40 before the padding and 40 of it.
            "ingest: bad line (tooLong, 1 so far): {\"sensor\": \"room\", \"value\": 21, \"pad\": \""
                + String(repeating: "x", count: 40) + "...\n",
        ] {
            #expect(await agent.child.waitForStderr(containing: expected), "\(expected) in:\n\(agent.child.stderrText)")
        }
        let status = try await SensorAgent.call(agent, "agent.status")
        #expect(status["roleState"]?["state"] == "running", "\(status)")
        let stopped = await agent.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
    }
}
