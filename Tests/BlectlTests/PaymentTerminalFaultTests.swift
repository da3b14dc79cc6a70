import BLETesting
import Glibc
import JSON
import Testing

/// The lane (bleagent, backend bluez, the scanner plugin) against blesim on a
/// private bus, with faults injected through blesim's Control1 and the
/// terminal side read back with Control1.TerminalTransactions.
@Suite("PaymentTerminalScanner under faults on blesim", .serialized)
struct PaymentTerminalFaultTests {
    static let terminal = PaymentTerminalCrashTests.terminal
    static let paymentRequest = "ad580003-3600-4cd1-87f0-6e799e31fc68"
    /// What bluetoothd answers WriteValue when the peer answers the profile's 0x83 busy.
    static let busyError = ["org.bluez.Error.Failed", "Operation failed with ATT error: 0x83"]

    /// A bench with the one-terminal scenario, a lane connected to CT-1 and a plugin-event stream.
    struct Lane {
        let bench: PaymentTerminalBench
        let agent: LaneAgent
        let events: Child
        let directory: String

        init(scanner: String) async throws {
            bench = try await PaymentTerminalBench(scenario: "payment-crash.json")
            directory = makeTemporaryDirectory()
            agent = try await LaneAgent(bench: bench, directory: directory, scanner: scanner)
            try #require(await agent.child.waitForStderr(containing: "terminal CT-1, Acme Payments"))
            events = try await Child(
                "\(buildDirectory)/blectl", agent.socket + ["--json", "events", "--kind", "plugin"])
            try #require(await events.waitForStderr(containing: "streaming events"))
        }

        func pay(_ reference: String, amount: Int = 4200) async throws -> Child {
            try await Child(
                "\(buildDirectory)/blectl",
                agent.socket + [
                    "--json", "call", "pos.pay", #"{"amount":\#(amount),"currency":"EUR","reference":"\#(reference)"}"#,
                ])
        }

        /// The terminal's transactions for `reference`.
        func atTerminal(_ reference: String) async throws -> [TerminalRecord] {
            try await bench.terminalTransactions(PaymentTerminalFaultTests.terminal).filter {
                $0.reference == reference
            }
        }

        /// The journal's record kinds for `id`, in order.
        func journalKinds(_ id: String) -> [String] {
            let bytes = readAll(LaneAgent.journalPath(directory)) ?? []
            return String(decoding: bytes, as: UTF8.self).split(separator: "\n").compactMap { line in
                guard let record = try? JSON(parsing: String(line.dropFirst(9))), record["tx"]?.stringValue == id
                else { return nil }
                return record["kind"]?.stringValue
            }
        }

        /// Stops the lane: the agent with SIGTERM (it must say it stopped), the event stream, the directory.
        func stop() async {
            #expect(await agent.kill(SIGTERM).contains("stopped"))
            events.signal(SIGTERM)
            _ = await events.finish()
            removeTree(directory)
        }
    }

    @Test(
        "a link dropped while the Payment Request write is in flight: pos.pay answers 1003, the payment is reconciling, and once reconnected it is settled approved, charged exactly once at the terminal"
    )
    func linkDroppedDuringWrite() async throws {
        let lane = try await Lane(scanner: #"{"paymentDeadlineSeconds": 10, "requerySeconds": 1}"#)
        // The terminal answers 1 s late: the drop lands while the write is in flight.
        try await lane.bench.control("SetDelay", "sd", [Self.terminal, "1"])
        let paying = try await lane.pay("drop-write")
        #expect(await lane.events.waitForStdout(containing: #""phase":"accepted""#))
        try await lane.bench.control("DropLink", "s", [Self.terminal])
        try await lane.bench.control("SetDelay", "sd", [Self.terminal, "0"])
        let answer = await paying.finish()
        #expect(answer.stderr.contains("(1003)"), "\(answer.stderr)")
        #expect(await lane.events.waitForStdout(containing: #""phase":"reconciling""#))
        #expect(await lane.events.waitForStdout(containing: #""state":"approved""#))

        let payment = try #require(try await lane.agent.payments().first)
        #expect(payment["reference"] == "drop-write")
        #expect(payment["phase"] == "final")
        #expect(payment["state"] == "approved")
        let id = try #require(payment["transactionId"]?.stringValue)
        let kinds = lane.journalKinds(id)
        #expect(kinds.first == "accepted" && kinds.contains("reconciling") && kinds.last == "final", "\(kinds)")
        #expect(!kinds.dropLast().contains("final"))
        let charged = try await lane.atTerminal("drop-write")
        #expect(charged.count == 1, "one transaction at the terminal: \(charged)")
        #expect(charged.first?.transactionID == id)
        #expect(charged.first?.charges == 1)
        await lane.stop()
    }

    @Test(
        "a terminal answering busy (ATT 0x83) twice: pos.pay writes the same request again within the deadline and answers approved; one transaction, one charge"
    )
    func busyRetried() async throws {
        let lane = try await Lane(scanner: #"{"paymentDeadlineSeconds": 10}"#)
        try await lane.bench.control(
            "FailNext", "ssuss", [Self.terminal, Self.paymentRequest, "2"] + Self.busyError)
        let answer = try await lane.pay("busy-twice").finish()
        #expect(answer.status == 0, "\(answer.stderr)")
        let payment = try JSON(parsing: answer.stdout)
        #expect(payment["state"] == "approved", "\(payment)")
        #expect(payment["phase"] == "final")
        let id = try #require(payment["transactionId"]?.stringValue)
        #expect(await lane.agent.child.waitForStderr(containing: "payment \(id): the terminal is busy"))
        #expect(lane.journalKinds(id) == ["accepted", "sent", "final"])
        let charged = try await lane.atTerminal("busy-twice")
        #expect(charged.map(\.charges) == [1], "\(charged)")
        await lane.stop()
    }

    @Test(
        "a terminal busy past the deadline: pos.pay answers 1003 and the payment is reconciling; once the terminal takes requests again the lane's later query settles it, charged once, without a reconnection"
    )
    func busyPastTheDeadline() async throws {
        // The terminal stays busy for 1,000 requests, so the deadline passes whatever it is; 5 s (not 1) gives a
        // loaded machine time for a busy answer to arrive first, which the 1003 message then names.
        let lane = try await Lane(scanner: #"{"paymentDeadlineSeconds": 5, "requerySeconds": 0.5}"#)
        try await lane.bench.control(
            "FailNext", "ssuss", [Self.terminal, Self.paymentRequest, "1000"] + Self.busyError)
        let answer = try await lane.pay("busy-long").finish()
        #expect(answer.stderr.contains("(1003)"), "\(answer.stderr)")
        #expect(answer.stderr.contains("busy"), "\(answer.stderr)")
        #expect(try await lane.atTerminal("busy-long").isEmpty, "a busy terminal recorded nothing")
        try await lane.bench.control("ClearFaults")
        #expect(await lane.events.waitForStdout(containing: #""state":"approved""#))
        let payment = try #require(try await lane.agent.payments().first)
        #expect(payment["phase"] == "final")
        #expect(payment["state"] == "approved")
        #expect(try await lane.atTerminal("busy-long").map(\.charges) == [1])
        #expect(!lane.agent.child.stderrText.contains("terminal-disconnected"))
        #expect(!lane.agent.child.stderrText.contains("lost; reconnecting"), "settled without a reconnection")
        await lane.stop()
    }
}
