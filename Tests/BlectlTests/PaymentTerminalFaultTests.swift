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

        init(scanner: String) throws {
            bench = try PaymentTerminalBench(scenario: "payment-crash.json")
            directory = makeTemporaryDirectory()
            agent = try LaneAgent(bench: bench, directory: directory, scanner: scanner)
            try #require(agent.child.waitForStderr(containing: "terminal CT-1, Acme Payments"))
            events = try Child("\(buildDirectory)/blectl", agent.socket + ["--json", "events", "--kind", "plugin"])
            try #require(events.waitForStderr(containing: "streaming events"))
        }

        func pay(_ reference: String, amount: Int = 4200) throws -> Child {
            try Child(
                "\(buildDirectory)/blectl",
                agent.socket + [
                    "--json", "call", "pos.pay", #"{"amount":\#(amount),"currency":"EUR","reference":"\#(reference)"}"#,
                ])
        }

        /// The terminal's transactions for `reference`.
        func atTerminal(_ reference: String) throws -> [TerminalRecord] {
            try bench.terminalTransactions(PaymentTerminalFaultTests.terminal).filter { $0.reference == reference }
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

        func stop() {
            #expect(agent.kill(SIGTERM).contains("stopped"))
            _ = events.finish()
            _ = "rm -rf '\(directory)'".withCString { system($0) }
        }
    }

    @Test(
        "a link dropped while the Payment Request write is in flight: pos.pay answers 1003, the payment is reconciling, and once reconnected it is settled approved, charged exactly once at the terminal"
    )
    func linkDroppedDuringWrite() throws {
        let lane = try Lane(scanner: #"{"paymentDeadlineSeconds": 10, "requerySeconds": 1}"#)
        defer { lane.stop() }
        // The terminal answers 1 s late: the drop lands while the write is in flight.
        try lane.bench.control("SetDelay", "sd", [Self.terminal, "1"])
        let paying = try lane.pay("drop-write")
        #expect(lane.events.waitForStdout(containing: #""phase":"accepted""#))
        try lane.bench.control("DropLink", "s", [Self.terminal])
        try lane.bench.control("SetDelay", "sd", [Self.terminal, "0"])
        let answer = paying.finish()
        #expect(answer.stderr.contains("(1003)"), "\(answer.stderr)")
        #expect(lane.events.waitForStdout(containing: #""phase":"reconciling""#))
        #expect(lane.events.waitForStdout(containing: #""state":"approved""#))

        let payment = try #require(try lane.agent.payments().first)
        #expect(payment["reference"] == "drop-write")
        #expect(payment["phase"] == "final")
        #expect(payment["state"] == "approved")
        let id = try #require(payment["transactionId"]?.stringValue)
        let kinds = lane.journalKinds(id)
        #expect(kinds.first == "accepted" && kinds.contains("reconciling") && kinds.last == "final", "\(kinds)")
        #expect(!kinds.dropLast().contains("final"))
        let charged = try lane.atTerminal("drop-write")
        #expect(charged.count == 1, "one transaction at the terminal: \(charged)")
        #expect(charged.first?.transactionID == id)
        #expect(charged.first?.charges == 1)
    }

    @Test(
        "a terminal answering busy (ATT 0x83) twice: pos.pay writes the same request again within the deadline and answers approved; one transaction, one charge"
    )
    func busyRetried() throws {
        let lane = try Lane(scanner: #"{"paymentDeadlineSeconds": 10}"#)
        defer { lane.stop() }
        try lane.bench.control(
            "FailNext", "ssuss", [Self.terminal, Self.paymentRequest, "2"] + Self.busyError)
        let answer = try lane.pay("busy-twice").finish()
        #expect(answer.status == 0, "\(answer.stderr)")
        let payment = try JSON(parsing: answer.stdout)
        #expect(payment["state"] == "approved", "\(payment)")
        #expect(payment["phase"] == "final")
        let id = try #require(payment["transactionId"]?.stringValue)
        #expect(lane.agent.child.waitForStderr(containing: "payment \(id): the terminal is busy"))
        #expect(lane.journalKinds(id) == ["accepted", "sent", "final"])
        let charged = try lane.atTerminal("busy-twice")
        #expect(charged.map(\.charges) == [1], "\(charged)")
    }

    @Test(
        "a terminal busy past the deadline: pos.pay answers 1003 and the payment is reconciling; once the terminal takes requests again the lane's later query settles it, charged once, without a reconnection"
    )
    func busyPastTheDeadline() throws {
        let lane = try Lane(scanner: #"{"paymentDeadlineSeconds": 1, "requerySeconds": 0.5}"#)
        defer { lane.stop() }
        try lane.bench.control("FailNext", "ssuss", [Self.terminal, Self.paymentRequest, "1000"] + Self.busyError)
        let answer = try lane.pay("busy-long").finish()
        #expect(answer.stderr.contains("(1003)"), "\(answer.stderr)")
        #expect(answer.stderr.contains("busy"), "\(answer.stderr)")
        #expect(try lane.atTerminal("busy-long").isEmpty, "a busy terminal recorded nothing")
        try lane.bench.control("ClearFaults")
        #expect(lane.events.waitForStdout(containing: #""state":"approved""#))
        let payment = try #require(try lane.agent.payments().first)
        #expect(payment["phase"] == "final")
        #expect(payment["state"] == "approved")
        #expect(try lane.atTerminal("busy-long").map(\.charges) == [1])
        #expect(!lane.agent.child.stderrText.contains("terminal-disconnected"))
        #expect(!lane.agent.child.stderrText.contains("lost; reconnecting"), "settled without a reconnection")
    }
}
