import BLETesting
import Glibc
import JSON
import Testing

/// What a configured path that never answers (a FIFO) or a disk that stalls (the blocking pool held up by its
/// test hook) does to the running agent: nothing to its control API. Each test drives bleagent through its
/// socket with blectl.
@Suite("the agent answers its control API whatever its files do", .serialized, .timeLimit(.minutes(3)))
struct StalledIOProcessTests {
    /// `agent.status` and `method` through blectl: both answer.
    static func answers(_ agent: RunningAgent, _ method: String = "agent.status") async throws -> JSON {
        let status = try await SensorAgent.call(agent, "agent.status")
        #expect(status["agent"] == "bleagent", "\(status)")
        return method == "agent.status" ? status : try await SensorAgent.call(agent, method)
    }

    @Test(
        "a FIFO as a sensor's file is refused at once with a clear error; the plugin and the control API go on answering, and the other sensors are served"
    )
    func fifoAsSensorPath() async throws {
        let data = makeTemporaryDirectory()
        defer { removeTree(data) }
        let fifo = "\(data)/temp1_input"
        try #require(mkfifo(fifo, 0o600) == 0)
        let ingest = "\(data)/ingest.sock"
        let sensors = """
            { "id": "pipe", "kind": "temperature", "source": { "type": "file", "path": "\(fifo)", "pollSeconds": 0.5 } },
            { "id": "room", "kind": "temperature", "source": { "type": "ingest" }, "thresholds": { "high": 30 } }
            """
        let agent = try await RunningAgent(
            config: SensorAgent.config(
                scenario: "\(repositoryRoot)/sim/scenarios/default.json", ingest: ingest, sensors: sensors))
        #expect(agent.readyMessage?.hasPrefix("READY=1\nSTATUS=peripheral role running") == true)
        #expect(await agent.child.waitForStderr(containing: "sensor pipe: open \(fifo): is a FIFO, not a regular file"))
        for _ in 0..<3 {
            let readings = try await Self.answers(agent, "sensors.readings")
            #expect(readings["sensors"]?[0]?["count"] == 0, "\(readings)")
        }
        let events = try await SensorAgent.pluginEvents(agent)
        defer { events.signal(SIGKILL) }
        SensorAgent.send(ingest, #"{"sensor": "room", "value": 35}"#)
        let breach = await SensorAgent.next("threshold", on: events)
        #expect(breach?["sensor"] == "room", "the ingest sensor is served: \(String(describing: breach))")
        let readings = try await Self.answers(agent, "sensors.readings")
        #expect(readings["sensors"]?[1]?["count"] == 1, "\(readings)")
        let stopped = await agent.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
    }

    @Test(
        "a FIFO at the config path on reload (agent.reload, SIGHUP) is refused with a clear error at once; the running config and role are kept and the control API answers"
    )
    func fifoAtConfigPathOnReload() async throws {
        let agent = try await RunningAgent(
            config: RunningAgent.config(role: "central", plugins: ("Diagnostics", "Diagnostics")))
        #expect(agent.readyMessage?.hasPrefix("READY=1\nSTATUS=central role running") == true)
        try #require(unlink(agent.configPath) == 0 && mkfifo(agent.configPath, 0o600) == 0)
        let reload = try await blectl(["--socket", agent.socketPath, "--json", "reload"])
        #expect(reload.status != 0, "\(reload)")
        #expect(reload.stderr.contains("is a FIFO, not a regular file"), "\(reload)")
        agent.signal(SIGHUP)
        #expect(await agent.child.waitForStderr(containing: "reload (SIGHUP) rejected; keeping the running config"))
        #expect(await agent.child.waitForStderr(containing: "is a FIFO, not a regular file", occurrences: 2))
        let status = try await Self.answers(agent)
        #expect(status["roleState"]?["state"] == "running", "\(status)")
        let stopped = await agent.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
    }

    @Test(
        "with every disk job of the blocking pool held up (its test hook), the control API and the plugin's methods go on answering; agent.status shows the jobs waiting"
    )
    func stalledDiskLeavesTheControlAPIAnswering() async throws {
        let data = makeTemporaryDirectory()
        defer { removeTree(data) }
        writeFile("\(data)/temp1_input", "23500\n")
        let delay = "\(data)/pool-delay"
        let sensors = """
            { "id": "room", "kind": "temperature",
              "source": { "type": "file", "path": "\(data)/temp1_input", "scale": 0.001, "pollSeconds": 0.2 } }
            """
        let agent = try await RunningAgent(
            config: SensorAgent.config(
                scenario: "\(repositoryRoot)/sim/scenarios/default.json", ingest: "\(data)/ingest.sock",
                sensors: sensors, extra: #""flushSeconds": 1,"#),
            environment: ["BLEAGENT_TEST_BLOCKING_DELAY_FILE": delay])
        let children = await SensorAgent.simPIDs(agent)
        let events = try await SensorAgent.pluginEvents(agent)
        defer { events.signal(SIGKILL) }
        // The disk works: a sample was read and the aggregates flushed.
        #expect(await SensorAgent.next("flushed", on: events) != nil)

        // From now on every job on the pool sleeps ten minutes first: the next sensor read (the node waits for
        // it before polling again or flushing) hangs on the pool.
        writeFile(delay, "600000")
        var pending: Int64 = 0
        for _ in 0..<300 where pending < 1 {
            let status = try await Self.answers(agent)
            pending = status["limits"]?["blockingPool"]?["pending"]?.intValue ?? 0
            if pending < 1 { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(pending >= 1, "a job waits on the pool (the hook holds it)")
        let clock = ContinuousClock()
        for _ in 0..<5 {
            let elapsed = try await clock.measure {
                let readings = try await Self.answers(agent, "sensors.readings")
                #expect(readings["sensors"]?[0]?["id"] == "room", "\(readings)")
                let status = try await Self.answers(agent)
                #expect(status["limits"]?["blockingPool"]?["pending"]?.intValue ?? 0 >= 1, "still held: \(status)")
            }
            #expect(elapsed < .seconds(15), "answered while the disk is stalled (\(elapsed))")
        }
        let status = try await Self.answers(agent)
        #expect(status["roleState"]?["state"] == "running", "\(status)")
        await SensorAgent.crash(agent, children: children)
    }
}
