import BLETesting
import Glibc
import JSON
import Testing

/// `uptime   12s` → `uptime   <N>s`: the one value in the table that depends on time.
func normalizingUptime(_ text: String) -> String {
    text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
        guard line.hasPrefix("uptime  "), line.last == "s" else { return String(line) }
        let value = line.drop(while: { !$0.isNumber })
        return String(line.prefix(line.count - value.count)) + "<N>s"
    }.joined(separator: "\n")
}

@Suite("blectl as a process", .serialized)
struct BlectlOutputTests {
    @Test("status prints the whole table")
    func statusTable() async throws {
        let agent = try await RunningAgent()
        let result = try await blectl(["--socket", agent.socketPath, "status"])
        #expect(result.status == 0)
        #expect(result.stderr == "")
        #expect(
            normalizingUptime(result.stdout) == """
                agent    bleagent 0.1.0 (control API 1)
                pid      \(agent.child.pid)
                uptime   <N>s
                config   \(agent.configPath)
                role     central (plugin PaymentTerminalScanner)
                backend  sim, adapter hci0
                state    failed: cannot load plugin "PaymentTerminalScanner": no plugin file \(agent.directory)/plugins/libPaymentTerminalScanner.so

                """)
        _ = await agent.stop()
    }

    @Test("status --json prints the raw result, and BLEAGENT_SOCKET names the socket")
    func statusJSON() async throws {
        let agent = try await RunningAgent()
        let result = try await blectl(["status", "--json"], environment: ["BLEAGENT_SOCKET": agent.socketPath])
        #expect(result.status == 0)
        var json = try JSON(parsing: result.stdout)
        #expect(json["uptimeSeconds"]?.intValue != nil)
        if case .object(var object) = json {
            object["uptimeSeconds"] = 0
            json = .object(object)
        }
        let expected: JSON = [
            "agent": "bleagent", "version": "0.1.0", "apiVersion": 1, "pid": .int(Int64(agent.child.pid)),
            "uptimeSeconds": 0, "config": .string(agent.configPath), "role": "central", "backend": "sim",
            "adapter": "hci0", "plugin": "PaymentTerminalScanner",
            "roleState": [
                "state": "failed", "role": "central", "plugin": "PaymentTerminalScanner",
                "reason": .string(
                    "cannot load plugin \"PaymentTerminalScanner\": no plugin file \(agent.directory)/plugins/libPaymentTerminalScanner.so"
                ),
            ],
            "recovery": [
                "backendLosses": 0, "lastLoss": .null, "restarts": 0, "restartsSucceeded": 0, "pendingRestart": .null,
            ],
            "limits": [
                "blockingPool": ["pending": 0],
                "control": [
                    "clients": 1, "maxClients": 16, "refusedClients": 0, "requestsInFlight": 0,
                    "maxRequestsInFlight": 32, "pausedClients": 0, "pausedReads": 0, "partialLineTimeoutSeconds": 10,
                    "idleClosed": 0,
                ],
            ],
        ]
        #expect(json == expected)
        #expect(result.stdout.hasSuffix("}\n") && !result.stdout.dropLast().contains("\n"), "one compact line")
        _ = await agent.stop()
    }

    @Test("a usage error exits 64 with the message and the whole usage text on stderr")
    func usageError() async throws {
        let help = try await blectl(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.hasPrefix("usage: blectl [--socket PATH] [--json] COMMAND [ARGUMENTS]\n"))
        for (arguments, message) in [
            (["frobnicate"], "unknown command \"frobnicate\""),
            ([], "missing command"),
            (["connect"], "missing DEVICE"),
            (["connect", "not-an-id"], "\"not-an-id\" is not a device id (a UUID as `blectl devices` lists it)"),
            (
                ["write", "abb607b0-7788-5544-ba9e-0042419e813b", "2a37", "xyz", "--hex"],
                "\"xyz\" is not hex bytes (an even number of hex digits, such as 0a1b or 0a:1b)"
            ),
            (
                ["read", "abb607b0-7788-5544-ba9e-0042419e813b", "12345"],
                "\"12345\" is not a UUID (such as 2a37 or 00002a37-0000-1000-8000-00805f9b34fb)"
            ),
            (
                ["events", "--kind", "weather"],
                "unknown event kind \"weather\" (discovered, connected, disconnected, value, state, plugin)"
            ),
            (["status", "extra"], "unexpected argument \"extra\""),
            (
                ["call", "agent.status", "[1"],
                "PARAMS_JSON is not valid JSON: line 1, column 3: unexpected end of input (json-c: unexpected end of data)"
            ),
        ] {
            let result = try await blectl(["--socket", "/nonexistent/agent.sock"] + arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stdout == "")
            #expect(result.stderr == "blectl: \(message)\n\n" + help.stdout, "\(arguments)")
        }
    }

    @Test("an unreachable agent exits 69")
    func unreachable() async throws {
        let result = try await blectl(["--socket", "/nonexistent/agent.sock", "status"])
        #expect(result.status == 69)
        #expect(result.stdout == "")
        #expect(
            result.stderr
                == "blectl: agent unreachable: cannot connect to /nonexistent/agent.sock: No such file or directory\n")
    }

    @Test(
        "an agent error exits 1: a central method while the central role is not running (-32011), and a rejected reload"
    )
    func agentErrors() async throws {
        let agent = try await RunningAgent()
        let devices = try await blectl(["--socket", agent.socketPath, "devices"])
        #expect(devices.status == 1)
        #expect(devices.stdout == "")
        #expect(devices.stderr == "blectl: agent error: the central role is not running (-32011)\n")

        let write = try await blectl([
            "--socket", agent.socketPath, "--json", "write", "abb607b0-7788-5544-ba9e-0042419e813b", "2A37", "hi",
        ])
        #expect(write.status == 1)
        #expect(
            write.stdout
                == #"{"code":-32011,"message":"the central role is not running","data":{"role":"central"}}"# + "\n")

        writeFile(agent.configPath, #"{"version":1,"role":"central","backend":"ble","roles":{}}"#)
        let reload = try await blectl(["--socket", agent.socketPath, "reload"])
        #expect(reload.status == 1)
        #expect(
            reload.stderr == """
                blectl: agent error: the config is invalid; the running config is kept (-32010)
                  backend: "ble" is not one of "bluez" or "sim"
                  roles.central: missing required field

                """)
        _ = await agent.stop()
    }

    @Test("events streams state events; reload and shutdown work end to end")
    func eventsReloadShutdown() async throws {
        let agent = try await RunningAgent()
        let events = try await Child(
            "\(buildDirectory)/blectl", ["--socket", agent.socketPath, "events", "--kind", "state"])
        #expect(await events.waitForStderr(containing: "blectl: streaming events (state); interrupt to stop\n"))
        let probe = try await blectl(["--socket", agent.socketPath, "call", "agent.methods"])
        #expect(probe.status == 0)
        #expect(
            probe.stdout == """
                [
                  "agent.methods",
                  "agent.reload",
                  "agent.shutdown",
                  "agent.status",
                  "central.connect",
                  "central.devices",
                  "central.disconnect",
                  "central.read",
                  "central.scan.start",
                  "central.scan.stop",
                  "central.services",
                  "central.stats",
                  "central.subscribe",
                  "central.unsubscribe",
                  "central.write",
                  "events.subscribe",
                  "events.unsubscribe",
                  "fleet.status",
                  "peripheral.advertising.start",
                  "peripheral.advertising.stop",
                  "peripheral.services",
                  "peripheral.subscribers",
                  "peripheral.update"
                ]

                """)
        let reload = try await blectl(["--socket", agent.socketPath, "reload"])
        #expect(reload.stdout == "reloaded: role central, backend sim\n")
        let shutdown = try await blectl(["--socket", agent.socketPath, "shutdown"])
        #expect(shutdown.status == 0)
        #expect(shutdown.stdout == "the agent is stopping\n")
        #expect(await agent.child.finish().status == 0)
        let streamed = await events.finish()
        #expect(streamed.status == 0)
        let lines = streamed.stdout.split(separator: "\n")
        // The reload retries the failed role (same settings), then reports the reload.
        let reason =
            #"cannot load plugin \"PaymentTerminalScanner\": no plugin file \#(agent.directory)/plugins/libPaymentTerminalScanner.so"#
        #expect(lines.count == 4, "\(lines)")
        #expect(
            Array(lines.prefix(3)) == [
                #"state {"agentState":"role","trigger":"control","roleState":{"state":"starting","role":"central","plugin":"PaymentTerminalScanner"}}"#,
                #"state {"agentState":"role","trigger":"control","roleState":{"state":"failed","role":"central","plugin":"PaymentTerminalScanner","reason":"\#(reason)"}}"#,
                #"state {"agentState":"reloaded","trigger":"control","role":"central","backend":"sim","roleState":{"state":"failed","role":"central","plugin":"PaymentTerminalScanner","reason":"\#(reason)"}}"#,
            ])
        #expect(lines.last?.hasPrefix(#"state {"agentState":"stopping","trigger":"agent.shutdown from pid "#) == true)
    }
}
