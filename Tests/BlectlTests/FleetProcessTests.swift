import Glibc
import JSON
import Testing

/// The agent on a real mosquitto (started by each test on a private Unix
/// socket): status and Last Will, reconnection, events, RPC, config push.
@Suite("fleet: the agent on an MQTT broker", .serialized)
struct FleetProcessTests {
    @Test(
        "status is retained online with agent.status; the control API answers while the broker is down; after a broker restart the agent reconnects; SIGKILL leaves the Last Will offline"
    )
    func statusWillAndReconnection() async throws {
        let broker = try await MosquittoBroker()
        let status = try await broker.subscriber(["bleagent/lane-1/status"])
        let agent = try await RunningAgent(
            config: diagnosticsConfig(fleet: fleetSection(broker: broker, node: "lane-1")))
        let socket = ["--socket", agent.socketPath]
        let online = try #require(
            await nextMessage(from: status, topic: "bleagent/lane-1/status") { $0["state"] == "online" })
        #expect(online["node"] == "lane-1")
        #expect(online["agent"]?["agent"] == "bleagent")
        #expect(online["agent"]?["role"] == "central")

        let table = try await blectl(socket + ["fleet", "status"])
        #expect(table.status == 0)
        #expect(table.stdout.contains("connection   connected"), "\(table.stdout)")
        #expect(table.stdout.contains(broker.url), "\(table.stdout)")
        let agentStatus = try JSON(parsing: try await blectl(socket + ["--json", "status"]).stdout)
        #expect(agentStatus["fleet"]?["connected"] == true)
        #expect(agentStatus["fleet"]?["outbox"]?["depth"] == 0)

        await broker.stop()
        // The role's work and the control API go on without the broker.
        let during = try await waitForFleetStatus(socket: socket, "the lost connection") {
            $0["connected"] == false && $0["lastError"] != .null
        }
        #expect(during["lastError"]?.stringValue?.isEmpty == false)
        #expect(try await blectl(socket + ["status"]).status == 0)

        try await broker.restart()
        let again = try await broker.subscriber(["bleagent/lane-1/status"])
        let reconnected = try #require(
            await nextMessage(from: again, topic: "bleagent/lane-1/status") {
                $0["state"] == "online" && ($0["agent"]?["fleet"]?["connections"]?.intValue ?? 0) >= 2
            })
        #expect(reconnected["agent"]?["fleet"]?["connected"] == true)

        agent.signal(SIGKILL)
        let will = try #require(
            await nextMessage(from: again, topic: "bleagent/lane-1/status") { $0["state"] == "offline" })
        #expect(will["node"] == "lane-1")
        await terminate(status, again)
    }

    @Test("libmosquitto (with the libssl and libcrypto it needs) is loaded only by an agent with a fleet section")
    func libmosquittoOnlyWithAFleet() async throws {
        let plain = try await RunningAgent(config: diagnosticsConfig(fleet: ""))
        #expect(try await blectl(["--socket", plain.socketPath, "status"]).status == 0)
        #expect(await maps(plain.child.pid, library: "libmosquitto") == false)
        #expect(await plain.stop().status == 0)

        let broker = try await MosquittoBroker()
        let status = try await broker.subscriber(["bleagent/lane-0/status"])
        let agent = try await RunningAgent(
            config: diagnosticsConfig(fleet: fleetSection(broker: broker, node: "lane-0")))
        _ = try #require(
            await nextMessage(from: status, topic: "bleagent/lane-0/status") { $0["state"] == "online" })
        #expect(await maps(agent.child.pid, library: "libmosquitto"))
        await terminate(status)
    }

    @Test(
        "events go to <prefix>/events/<kind>: plugin events as they come, discoveries as one summary per interval"
    )
    func events() async throws {
        let broker = try await MosquittoBroker()
        let events = try await broker.subscriber(["bleagent/lane-2/events/#"])
        let fleet = fleetSection(broker: broker, node: "lane-2", extra: #""events": { "discoverySeconds": 2 }"#)
        let agent = try await RunningAgent(config: diagnosticsConfig(fleet: fleet, heartbeatSeconds: 1))
        let heartbeat = try #require(
            await nextMessage(from: events, topic: "bleagent/lane-2/events/plugin") {
                $0["data"]?["name"] == "heartbeat"
            })
        #expect(heartbeat["node"] == "lane-2")
        #expect(heartbeat["data"]?["namespace"] == "diag")
        #expect(try await blectl(["--socket", agent.socketPath, "scan", "start", "--duplicates"]).status == 0)
        let summary = try #require(
            await nextMessage(from: events, topic: "bleagent/lane-2/events/discovered") {
                ($0["data"]?["reports"]?.intValue ?? 0) > 0
            })
        let devices = summary["data"]?["devices"]?.arrayValue ?? []
        #expect(!devices.isEmpty && devices.count <= 256)
        #expect(summary["data"]?["intervalSeconds"] == 2)
        // One summary per interval, however many reports: the next comes a whole interval later.
        let next = try #require(
            await nextMessage(from: events, topic: "bleagent/lane-2/events/discovered") {
                ($0["data"]?["reports"]?.intValue ?? 0) > 0
            })
        let gap = (next["at"]?.intValue ?? 0) - (summary["at"]?.intValue ?? 0)
        #expect(gap >= 1500, "summaries \(gap) ms apart")
        await terminate(events)
    }

    @Test(
        "RPC over MQTT 5 (response topic, correlation data) and 3.1.1 (replyTo) answers through the method registry; methods outside rpcAllow and bad params get the same JSON-RPC errors as on the socket"
    )
    func rpc() async throws {
        let broker = try await MosquittoBroker()
        let agent = try await RunningAgent(
            config: diagnosticsConfig(
                fleet: fleetSection(broker: broker, node: "lane-3", extra: #""rpcAllow": ["agent.*", "diag.echo"]"#)))
        let statusTopic = try await broker.subscriber(["bleagent/lane-3/status"])
        _ = await nextMessage(from: statusTopic, topic: "bleagent/lane-3/status") { $0["state"] == "online" }

        func request(_ body: String) async throws -> JSON? {
            let result = try await Child(
                MosquittoTools.requestResponse,
                broker.clientArguments + [
                    "-t", "bleagent/lane-3/rpc", "-e", "bleagent/lane-3/rpc/reply/test", "-m", body, "-W", "20",
                ]
            )
            .finish()
            return try? JSON(parsing: result.stdout)
        }
        let status = try #require(try await request(#"{"jsonrpc":"2.0","id":1,"method":"agent.status"}"#))
        #expect(status["id"] == 1)
        #expect(status["result"]?["role"] == "central")
        let echo = try #require(try await request(#"{"jsonrpc":"2.0","id":"e","method":"diag.echo","params":{"a":1}}"#))
        #expect(echo["result"]?["a"] == 1, "\(echo)")
        let refused = try #require(try await request(#"{"jsonrpc":"2.0","id":2,"method":"diag.ping"}"#))
        #expect(refused["error"]?["code"] == -32002, "\(refused)")
        let unknown = try #require(try await request(#"{"jsonrpc":"2.0","id":3,"method":"agent.nothing"}"#))
        #expect(unknown["error"]?["code"] == -32601, "\(unknown)")
        // The same refusal of bad params as on the control socket.
        let badParams = try #require(
            try await request(#"{"jsonrpc":"2.0","id":4,"method":"agent.status","params":{"x":1}}"#))
        let onSocket = try await blectl(["--socket", agent.socketPath, "--json", "call", "agent.status", #"{"x":1}"#])
        let socketError = try JSON(parsing: onSocket.stdout)
        #expect(badParams["error"]?["code"] == socketError["code"], "\(badParams) vs \(socketError)")
        #expect(badParams["error"]?["message"] == socketError["message"])
        let malformed = try #require(try await request("not json"))
        #expect(malformed["error"]?["code"] == -32700)

        // MQTT 3.1.1: the request names its reply topic.
        let replies = try await broker.subscriber(["bleagent/lane-3/rpc/reply/old"], extra: ["-V", "mqttv311"])
        try await broker.publish(
            "bleagent/lane-3/rpc",
            #"{"jsonrpc":"2.0","id":7,"method":"agent.methods","replyTo":"bleagent/lane-3/rpc/reply/old"}"#,
            extra: ["-V", "mqttv311"])
        let methods = try #require(await nextMessage(from: replies, topic: "bleagent/lane-3/rpc/reply/old"))
        #expect(methods["id"] == 7)
        #expect(methods["result"]?.arrayValue?.contains("fleet.status") == true)
        // A reply topic outside <prefix>/rpc/reply/ is not answered (and the call not run).
        try await broker.publish(
            "bleagent/lane-3/rpc", #"{"jsonrpc":"2.0","id":8,"method":"agent.shutdown","replyTo":"elsewhere/x"}"#)
        try await waitForFleetStatus(socket: ["--socket", agent.socketPath], "the unanswerable request") {
            $0["rpc"]?["unanswerable"] == 1
        }
        #expect(try await blectl(["--socket", agent.socketPath, "status"]).status == 0)
        await terminate(statusTopic, replies)
    }

    @Test(
        "a config pushed to <prefix>/config/set is validated (rejected with every field error, the file untouched), written atomically with a .bak and applied like agent.reload (central to peripheral); the retained push seen again after a reconnection is unchanged"
    )
    func configPush() async throws {
        let broker = try await MosquittoBroker()
        let results = try await broker.subscriber(["bleagent/lane-4/config/result"])
        let fleet = fleetSection(broker: broker, node: "lane-4")
        let original = diagnosticsConfig(fleet: fleet)
        let agent = try await RunningAgent(config: original)
        let socket = ["--socket", agent.socketPath]
        let statusTopic = try await broker.subscriber(["bleagent/lane-4/status"])
        _ = await nextMessage(from: statusTopic, topic: "bleagent/lane-4/status") { $0["state"] == "online" }

        let invalid = #"{"version": 1, "role": "sideways", "roles": {}, "bogus": 1}"#
        try await broker.publish("bleagent/lane-4/config/set", invalid, retain: true)
        let rejected = try #require(await nextMessage(from: results, topic: "bleagent/lane-4/config/result"))
        #expect(rejected["status"] == "rejected")
        let paths = Set((rejected["errors"]?.arrayValue ?? []).compactMap { $0["path"]?.stringValue })
        #expect(paths.isSuperset(of: ["role", "bogus", "fleet"]), "\(rejected)")
        #expect(String(decoding: try readFileBytes(agent.configPath), as: UTF8.self) == original)
        #expect(!fileExists(agent.configPath + ".bak"))

        let pushed = diagnosticsConfig(role: "peripheral", fleet: fleet)
        try await broker.publish("bleagent/lane-4/config/set", pushed, retain: true)
        let applied = try #require(
            await nextMessage(from: results, topic: "bleagent/lane-4/config/result") { $0["status"] != "rejected" })
        #expect(applied["status"] == "applied", "\(applied)")
        #expect(applied["role"] == "peripheral")
        #expect(String(decoding: try readFileBytes(agent.configPath), as: UTF8.self) == pushed)
        #expect(String(decoding: try readFileBytes(agent.configPath + ".bak"), as: UTF8.self) == original)
        let status = try JSON(parsing: try await blectl(socket + ["--json", "status"]).stdout)
        #expect(status["role"] == "peripheral")
        #expect(status["roleState"]?["state"] == "running")

        // The broker hands the retained push over again at the next connection: nothing changes.
        try await broker.restart()
        let again = try await broker.subscriber(["bleagent/lane-4/config/result"])
        let unchanged = try #require(
            await nextMessage(from: again, topic: "bleagent/lane-4/config/result") { $0["status"] == "unchanged" })
        #expect(unchanged["crc32"] == applied["crc32"])
        #expect(String(decoding: try readFileBytes(agent.configPath + ".bak"), as: UTF8.self) == original)
        await terminate(results, statusTopic, again)
    }
}
