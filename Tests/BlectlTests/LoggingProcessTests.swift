import Glibc
import JSON
import Testing

/// What the agent writes to its log: payment details only at debug, strings
/// from outside with their control characters escaped (no forged lines),
/// refused connections at notice with the uid and the reason, rate-limited.
@Suite("bleagent's log", .serialized, .timeLimit(.minutes(3)))
struct LoggingProcessTests {
    /// A line of `log` starting with `prefix`, if any.
    static func line(startingWith prefix: String, in log: String) -> String? {
        log.split(separator: "\n").first { $0.hasPrefix(prefix) }.map(String.init)
    }

    @Test("at the default level a payment's amount, reference and auth code are not logged; at debug they are")
    func paymentDetailsAtDebugOnly() async throws {
        for debug in [false, true] {
            let agent = try await RunningAgent(
                config: PaymentTerminalScannerProcessTests.config(deadlineSeconds: 30),
                arguments: debug ? ["--log-level", "debug"] : [])
            #expect(await agent.child.waitForStderr(containing: "terminal LT-1, Acme Payments"))
            let reply = try await blectl([
                "--socket", agent.socketPath, "--json", "call", "pos.pay",
                #"{"amount":4711,"currency":"EUR","reference":"secret-ref\nbleagent: forged"}"#,
            ])
            let payment = try JSON(parsing: reply.stdout)
            #expect(payment["state"] == "approved", "\(reply)")
            let id = try #require(payment["transactionId"]?.stringValue)
            #expect(await agent.child.waitForStderr(containing: "payment \(id): approved"))
            let log = await agent.stop().stderr
            // Each detail as the plugin writes it: a bare "4711" also matches a process id in the log (dbus-daemon[14711]).
            for detail in ["4711 EUR", "secret-ref", "A00001"] {
                #expect(log.contains(detail) == debug, "\(detail) at \(debug ? "debug" : "info"):\n\(log)")
            }
            #expect(Self.line(startingWith: "bleagent: forged", in: log) == nil, "a forged line:\n\(log)")
            if debug { #expect(log.contains(#"secret-ref\nbleagent: forged"#), "escaped:\n\(log)") }
        }
    }

    @Test("a config field name with a newline is logged escaped when the reload is rejected: no forged line")
    func configStringsEscaped() async throws {
        let agent = try await RunningAgent()
        writeFile(
            agent.configPath,
            RunningAgent.config(role: "central").replacing(
                #""version": 1,"#, with: #""version": 1, "x\nbleagent: role central: running\u001b[2J": 1,"#))
        agent.signal(SIGHUP)
        #expect(await agent.child.waitForStderr(containing: ": unknown field"))
        let log = await agent.stop().stderr
        #expect(Self.line(startingWith: "bleagent: role central: running", in: log) == nil, "forged:\n\(log)")
        #expect(log.contains(#"x\nbleagent: role central: running\x1b[2J: unknown field"#), "\(log)")
    }

    @Test("refused connections are logged at notice with uid and reason, at most a burst of them at once")
    func refusedConnections() async throws {
        let agent = try await RunningAgent(
            config: RunningAgent.config(role: "central", extra: #", "allowedUids": [4242]"#))
        for _ in 1...40 {
            let client = try RawControlClient(path: agent.socketPath)
            #expect(await client.readLine()?.contains("-32002") == true)
            #expect(await client.readLine() == nil, "closed")
        }
        agent.signal(SIGHUP)
        #expect(await agent.child.waitForStderr(containing: "reloaded"))
        let refused = agent.child.stderrText.split(separator: "\n").filter { $0.contains("refused a connection") }
        #expect(refused.first?.hasPrefix("bleagent: notice: ") == true, "\(refused)")
        #expect(refused.first?.contains("uid \(geteuid())") == true, "\(refused)")
        #expect(refused.first?.contains("not allowed") == true, "\(refused)")
        #expect((1...10).contains(refused.count), "rate-limited: \(refused.count) lines")
        #expect(await agent.stop().status == 0)
    }
}
