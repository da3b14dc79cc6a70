import Glibc
import JSON
import Testing

/// The payment-terminal scanner plugin (libPaymentTerminalScanner.so from the
/// build directory) in a real bleagent on the embedded simulator, whose
/// default scenario has three terminals at 0.5 m (T-01), 2.5 m (T-02) and 9 m (T-03).
@Suite("PaymentTerminalScanner on the embedded simulator", .serialized)
struct PaymentTerminalScannerProcessTests {
    static func config(deadlineSeconds: Double) -> String {
        """
        {
          "version": 1,
          "role": "central",
          "backend": "sim",
          "control": { "socket": "run/control.sock" },
          "restore": { "stateDirectory": "state" },
          "pluginDirectory": "\(buildDirectory)",
          "sim": { "scenario": "\(repositoryRoot)/sim/scenarios/default.json" },
          "roles": {
            "central": { "plugin": "PaymentTerminalScanner",
                         "config": { "rssiThreshold": -75, "margin": 6, "dwell": 3,
                                     "paymentDeadlineSeconds": \(deadlineSeconds) } }
          }
        }
        """
    }

    @Test(
        "loaded by path, the scanner finds the terminals, selects and connects to the nearest (Terminal Info, battery), lists them with pos.terminals, and moves with pos.select / pos.release"
    )
    func selectsNearest() throws {
        let agent = try RunningAgent(config: Self.config(deadlineSeconds: 30))
        let socket = ["--socket", agent.socketPath]
        #expect(agent.child.waitForStderr(containing: "terminal selected: PayTerm-01"))
        #expect(agent.child.waitForStderr(containing: "terminal T-01, ACME P1 2.0, battery 87%"))
        #expect(agent.child.waitForStderr(containing: "terminal found: PayTerm-02"))

        let listed = try JSON(parsing: try blectl(socket + ["--json", "call", "pos.terminals"]).stdout)
        let terminals = listed["terminals"]?.arrayValue ?? []
        #expect(terminals.compactMap { $0["name"]?.stringValue }.prefix(2) == ["PayTerm-01", "PayTerm-02"])
        let nearest = try #require(terminals.first)
        #expect(listed["selected"] == nearest["id"], "\(listed)")
        #expect(nearest["selected"] == true)
        #expect(nearest["terminalId"] == "T-01")
        #expect(nearest["battery"] == 87)

        let events = try Child("\(buildDirectory)/blectl", socket + ["--json", "events", "--kind", "plugin"])
        #expect(events.waitForStderr(containing: "streaming events"))
        let selected = try JSON(
            parsing: try blectl(socket + ["--json", "call", "pos.select", #"{"terminal":"PayTerm-02"}"#]).stdout)
        #expect(selected["name"] == "PayTerm-02")
        #expect(selected["selected"] == true)
        #expect(events.waitForStdout(containing: #""name":"terminal-lost""#))
        #expect(events.waitForStdout(containing: #""name":"PayTerm-02""#))
        #expect(events.waitForStdout(containing: #""terminalId":"T-02""#), "connected to the pinned terminal")

        let released = try blectl(socket + ["--json", "call", "pos.release"])
        #expect(released.stdout == #"{"selected":null}"# + "\n")
        let after = try JSON(parsing: try blectl(socket + ["--json", "call", "pos.terminals"]).stdout)
        #expect(after["selected"] == .null)
        let unknown = try blectl(socket + ["call", "pos.select", #"{"terminal":"PayTerm-99"}"#])
        #expect(unknown.stderr.contains("(1002)"), "\(unknown.stderr)")
        let refused = try blectl(socket + ["call", "pos.pay", #"{"amount":100,"currency":"EUR"}"#])
        #expect(refused.stderr.contains("(1001)"), "no terminal selected: \(refused.stderr)")
        kill(events.pid, SIGKILL)
        _ = events.finish()
        #expect(agent.stop().status == 0)
    }

    @Test(
        "pos.pay journals accepted (synced) before the write and sent after it; with no final status by the deadline it answers 1003 and the payment stays reconciling"
    )
    func deadlineLeavesPaymentReconciling() throws {
        // The default scenario's terminals serve the profile's GATT with static values:
        // they take the write but never indicate a status.
        let agent = try RunningAgent(config: Self.config(deadlineSeconds: 1))
        let socket = ["--socket", agent.socketPath]
        #expect(agent.child.waitForStderr(containing: "terminal T-01, ACME P1 2.0"))
        let paid = try blectl(socket + ["call", "pos.pay", #"{"amount":1250,"currency":"EUR","reference":"lane-1"}"#])
        #expect(paid.status != 0)
        #expect(paid.stderr.contains("(1003)"), "\(paid.stderr)")

        let listed = try JSON(parsing: try blectl(socket + ["--json", "call", "pos.transactions"]).stdout)
        let payment = try #require(listed["transactions"]?[0])
        #expect(payment["phase"] == "reconciling")
        #expect(payment["terminal"] == "T-01")
        #expect(payment["amount"] == 1250)
        #expect(payment["reconciling"] == "deadline passed")

        let journal = String(
            decoding: try #require(readAll("\(agent.directory)/state/plugins/PaymentTerminalScanner/payments.journal")),
            as: UTF8.self)
        let kinds = journal.split(separator: "\n").compactMap { line -> String? in
            try? JSON(parsing: String(line.dropFirst(9)))["kind"]?.stringValue
        }
        #expect(kinds == ["accepted", "sent", "reconciling"], "\(journal)")
        #expect(agent.stop().status == 0)
    }
}

/// A file's bytes, or nil when it cannot be read.
func readAll(_ path: String) -> [UInt8]? {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = read(fd, &chunk, chunk.count)
        if count <= 0 { return bytes }
        bytes += chunk[..<count]
    }
}
