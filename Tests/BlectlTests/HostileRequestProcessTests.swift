import BLETesting
import Glibc
import JSON
import Testing

/// Hostile control requests against the real bleagent: duplicate keys,
/// whitespace-only lines, and params of the wrong type, range or
/// combination. Every refusal is -32602 (or -32700) naming the field, and a
/// refused request changes nothing.
@Suite("bleagent refuses hostile control requests and changes nothing", .serialized, .timeLimit(.minutes(3)))
struct HostileRequestProcessTests {
    static func centralAgent() async throws -> RunningAgent {
        try await RunningAgent(config: RunningAgent.config(role: "central", plugins: ("Diagnostics", "Diagnostics")))
    }

    /// The params error of `reply`: its message and `data.errors[0].path`.
    static func invalidParams(_ reply: JSON?) -> (message: String, path: String)? {
        guard let error = reply?["error"], error["code"] == -32602 else { return nil }
        return (error["message"]?.stringValue ?? "", error["data"]?["errors"]?[0]?["path"]?.stringValue ?? "")
    }

    @Test("a request repeating \"method\" is a parse error naming the key; the agent does not shut down")
    func duplicateMethodKey() async throws {
        let agent = try await Self.centralAgent()
        let client = try RawControlClient(path: agent.socketPath)
        await client.send(#"{"jsonrpc":"2.0","id":1,"method":"agent.status","method":"agent.shutdown"}"# + "\n")
        let reply = await client.reply()
        #expect(reply?["error"]?["code"] == -32700, "\(reply ?? .null)")
        #expect(reply?["error"]?["message"]?.stringValue?.contains(#"duplicate key "method""#) == true)
        #expect(await client.call("agent.status", id: 2)?["result"]?["agent"] == "bleagent", "the agent still serves")
        #expect(await agent.stop().status == 0)
    }

    @Test("a whitespace-only line is skipped like an empty one: the next request's reply is the first line")
    func whitespaceLine() async throws {
        let agent = try await Self.centralAgent()
        let client = try RawControlClient(path: agent.socketPath)
        await client.send(" \t \r\n   \n")
        let reply = await client.call("agent.methods", id: 7)
        #expect(reply?["id"] == 7, "\(reply ?? .null)")
        #expect(reply?["result"]?.arrayValue != nil)
        #expect(await agent.stop().status == 0)
    }

    @Test(
        "central.scan.start asked before bluetoothd is on the bus waits for the adapter's state to be known, then scans"
    )
    func scanBeforeBluetoothd() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let config = RunningAgent.config(role: "central", plugins: ("Diagnostics", "Diagnostics"))
            .replacing(#""backend": "sim""#, with: #""backend": "bluez""#)
        let agent = try await RunningAgent(config: config, environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        let client = try RawControlClient(path: agent.socketPath)
        #expect(await client.call("events.subscribe", params: #"{"kinds":["discovered"]}"#)?["result"] != nil)
        // No org.bluez yet: the manager's state is unknown until blesim (started below, which takes far longer
        // than a request) is on the bus.
        let started = Task { await client.call("central.scan.start", params: #"{"allowDuplicates":true}"#, id: 2) }
        let blesim = try await BlesimProcess.start(address: bus.address)
        defer { blesim.stop() }
        let reply = await started.value
        #expect(reply?["result"]?["scanning"] == true, "\(reply ?? .null)")
        #expect(await client.event("discovered") != nil)
        #expect(await agent.stop().status == 0)
    }

    @Test(
        "central.scan.start refuses wrong types and ranges with -32602 and the field's path, and a refused request leaves the running scan alone"
    )
    func scanParams() async throws {
        let agent = try await Self.centralAgent()
        let client = try RawControlClient(path: agent.socketPath)
        #expect(await client.call("events.subscribe", params: #"{"kinds":["discovered"]}"#)?["result"] != nil)
        let started = await client.call("central.scan.start", params: #"{"allowDuplicates":true}"#, id: 2)
        #expect(started?["result"]?["scanning"] == true, "\(started ?? .null)")
        #expect(await client.event("discovered") != nil)

        let refusals: [(params: String, path: String)] = [
            (#"{"durationSeconds":"zz"}"#, "durationSeconds"),
            (#"{"durationSeconds":0}"#, "durationSeconds"),
            (#"{"durationSeconds":86401}"#, "durationSeconds"),
            (#"{"allowDuplicates":"yes"}"#, "allowDuplicates"),
            (#"{"rssiThreshold":"strong"}"#, "rssiThreshold"),
            (#"{"rssiThreshold":-500}"#, "rssiThreshold"),
            (#"{"services":["not-a-uuid"]}"#, "services[0]"),
            (#"{"namePattern":7}"#, "namePattern"),
            (#"{"allowDuplicate":true}"#, "allowDuplicate"),
        ]
        for (index, refusal) in refusals.enumerated() {
            let reply = await client.call("central.scan.start", params: refusal.params, id: 10 + index)
            let error = Self.invalidParams(reply)
            #expect(error?.path == refusal.path, "\(refusal.params): \(reply ?? .null)")
            #expect(error?.message.hasPrefix(refusal.path + ": ") == true, "\(reply ?? .null)")
            #expect(reply?["result"] == nil, "\(refusal.params) was accepted: \(reply ?? .null)")
        }
        // The first scan still runs: discoveries keep coming well after the last refusal.
        for count in 1...20 {
            guard await client.event("discovered") != nil else {
                Issue.record("the scan stopped after a refused central.scan.start (\(count - 1) events)")
                break
            }
        }
        #expect(await agent.stop().status == 0)
    }

    @Test("central.write refuses a withResponse that is not a Boolean, and value with text")
    func writeParams() async throws {
        let agent = try await Self.centralAgent()
        let client = try RawControlClient(path: agent.socketPath)
        let id = "00000000-0000-0000-0000-000000000001"
        for (params, path) in [
            (#"{"id":"\#(id)","characteristic":"2a37","value":"00","withResponse":0}"#, "withResponse"),
            (#"{"id":"\#(id)","characteristic":"2a37","value":"00","withResponse":"false"}"#, "withResponse"),
            (#"{"id":"\#(id)","characteristic":"2a37","value":"00","text":"x"}"#, "value"),
            (#"{"id":"\#(id)","characteristic":"2a37"}"#, "value"),
            (#"{"id":"\#(id)","characteristic":"2a37","value":"0g"}"#, "value"),
            (#"{"id":"nope","characteristic":"2a37","value":"00"}"#, "id"),
        ] {
            let reply = await client.call("central.write", params: params)
            #expect(Self.invalidParams(reply)?.path == path, "\(params): \(reply ?? .null)")
        }
        #expect(await agent.stop().status == 0)
    }

    @Test("methods without params refuse params; agent.* and events.* are checked the same way")
    func noParamMethods() async throws {
        let agent = try await Self.centralAgent()
        let client = try RawControlClient(path: agent.socketPath)
        for method in ["agent.status", "agent.methods", "central.scan.stop", "central.devices", "events.unsubscribe"] {
            let reply = await client.call(method, params: #"{"verbose":true}"#)
            #expect(Self.invalidParams(reply)?.path == "verbose", "\(method): \(reply ?? .null)")
        }
        let kinds = await client.call("events.subscribe", params: #"{"kinds":["state","bogus"]}"#)
        #expect(Self.invalidParams(kinds)?.path == "kinds[1]", "\(kinds ?? .null)")
        #expect(await client.call("agent.status", params: "[]")?["result"] != nil, "an empty array is no params")
        #expect(await agent.stop().status == 0)
    }
}

/// The same checks on the peripheral role's methods and a plugin's methods,
/// with the sensor aggregator running.
@Suite("bleagent refuses bad peripheral.* and plugin params", .serialized, .timeLimit(.minutes(3)))
struct PeripheralParamsProcessTests {
    @Test(
        "peripheral.update refuses value with text and a characteristic that neither notifies nor indicates; sensors.* refuse params"
    )
    func updateAndSensors() async throws {
        let data = makeTemporaryDirectory()
        defer { removeTree(data) }
        let agent = try await RunningAgent(
            config: SensorAgent.config(
                scenario: "\(repositoryRoot)/sim/scenarios/default.json", ingest: "\(data)/ingest.sock",
                sensors: #"{ "id": "room", "kind": "temperature", "source": { "type": "ingest" } }"#,
                extra: #""deviceInformation": { "manufacturer": "bleagent" },"#))
        #expect(await agent.child.waitForStderr(containing: "; advertising "), "the services are published")
        let client = try RawControlClient(path: agent.socketPath)
        let both = await client.call(
            "peripheral.update", params: #"{"characteristic":"2a6e","value":"1008","text":"x"}"#)
        #expect(HostileRequestProcessTests.invalidParams(both)?.path == "value", "\(both ?? .null)")
        // Manufacturer Name String (0x2A29) is read-only.
        let readOnly = await client.call("peripheral.update", params: #"{"characteristic":"2a29","text":"evil"}"#)
        #expect(HostileRequestProcessTests.invalidParams(readOnly)?.path == "characteristic", "\(readOnly ?? .null)")
        let fine = await client.call("peripheral.update", params: #"{"characteristic":"2a6e","value":"1008"}"#)
        #expect(fine?["result"]?["queued"] != nil, "\(fine ?? .null)")
        for method in ["sensors.readings", "sensors.subscriptions", "sensors.ingest-stats"] {
            let reply = await client.call(method, params: #"{"sensor":"room"}"#)
            #expect(HostileRequestProcessTests.invalidParams(reply)?.path == "sensor", "\(method): \(reply ?? .null)")
        }
        #expect(await agent.stop().status == 0)
    }
}

/// Configs with duplicate keys or a byte order mark are refused at start
/// with a message that says so.
@Suite("bleagent refuses configs with duplicate keys or a BOM", .serialized)
struct HostileConfigProcessTests {
    static func check(_ bytes: [UInt8]) async throws -> (status: Int32, stdout: String, stderr: String) {
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }
        let fd = open("\(directory)/roles.json", O_CREAT | O_WRONLY | O_TRUNC, 0o644)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        return try await Child("\(buildDirectory)/bleagent", ["--config", "\(directory)/roles.json"]).finish()
    }

    @Test("a repeated key in roles.json is named, the agent exits 78 and starts nothing")
    func duplicateKey() async throws {
        let config = RunningAgent.config(role: "central").replacing(
            #""role": "central","#, with: #""role": "central", "role": "peripheral","#)
        let result = try await Self.check(Array(config.utf8))
        #expect(result.status == 78)
        #expect(result.stderr.contains(#"duplicate key "role""#), "\(result.stderr)")
    }

    @Test("a config key holding a newline is printed escaped: the error cannot forge a line")
    func escapedIssues() async throws {
        let config = RunningAgent.config(role: "central").replacing(
            #""version": 1,"#, with: #""version": 1, "x\nbleagent: started fine": 1,"#)
        let result = try await Self.check(Array(config.utf8))
        #expect(result.status == 78)
        #expect(!result.stderr.split(separator: "\n").contains { $0.hasPrefix("bleagent: started fine") }, "\(result)")
        #expect(result.stderr.contains(#"x\nbleagent: started fine: unknown field"#), "\(result.stderr)")
    }

    @Test("a roles.json starting with a UTF-8 BOM says so instead of 'invalid UTF-8'")
    func byteOrderMark() async throws {
        let result = try await Self.check([0xEF, 0xBB, 0xBF] + Array(RunningAgent.config(role: "central").utf8))
        #expect(result.status == 78)
        #expect(result.stderr.contains("byte order mark"), "\(result.stderr)")
        #expect(!result.stderr.contains("invalid UTF-8"), "\(result.stderr)")
    }
}
