import BLETesting
import Glibc
import JSON
import Testing

/// The payment-terminal scanner plugin (libPaymentTerminalScanner.so from the
/// build directory) in a real bleagent on the embedded simulator serving
/// Fixtures/payment-lane.json: virtual terminals LT-1 (0.5 m), LT-2 (2.5 m)
/// and LT-3 (9 m), final 1.5 s after a request, declining references DECLINE-*.
@Suite("PaymentTerminalScanner on the embedded simulator", .serialized)
struct PaymentTerminalScannerProcessTests {
    static let nearestAddress = "C0:54:52:4D:10:01"

    static func config(deadlineSeconds: Double) -> String {
        """
        {
          "version": 1,
          "role": "central",
          "backend": "sim",
          "control": { "socket": "run/control.sock" },
          "restore": { "stateDirectory": "state" },
          "pluginDirectory": "\(buildDirectory)",
          "sim": { "scenario": "\(repositoryRoot)/Tests/BlectlTests/Fixtures/payment-lane.json" },
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
    func selectsNearest() async throws {
        let agent = try await RunningAgent(config: Self.config(deadlineSeconds: 30))
        let socket = ["--socket", agent.socketPath]
        #expect(await agent.child.waitForStderr(containing: "terminal selected: Lane-T1"))
        #expect(await agent.child.waitForStderr(containing: "terminal LT-1, Acme Payments AP-200 2.4.1, battery 77%"))
        #expect(await agent.child.waitForStderr(containing: "terminal found: Lane-T2"))

        let listed = try JSON(parsing: try await blectl(socket + ["--json", "call", "pos.terminals"]).stdout)
        let terminals = listed["terminals"]?.arrayValue ?? []
        #expect(terminals.compactMap { $0["name"]?.stringValue }.prefix(2) == ["Lane-T1", "Lane-T2"])
        let nearest = try #require(terminals.first)
        #expect(listed["selected"] == nearest["id"], "\(listed)")
        #expect(nearest["selected"] == true)
        #expect(nearest["terminalId"] == "LT-1")
        #expect(nearest["battery"] == 77)

        let events = try await Child("\(buildDirectory)/blectl", socket + ["--json", "events", "--kind", "plugin"])
        #expect(await events.waitForStderr(containing: "streaming events"))
        let selected = try JSON(
            parsing: try await blectl(socket + ["--json", "call", "pos.select", #"{"terminal":"Lane-T2"}"#]).stdout)
        #expect(selected["name"] == "Lane-T2")
        #expect(selected["selected"] == true)
        #expect(await events.waitForStdout(containing: #""name":"terminal-lost""#))
        #expect(await events.waitForStdout(containing: #""terminalId":"LT-2""#), "connected to the pinned terminal")

        let released = try await blectl(socket + ["--json", "call", "pos.release"])
        #expect(released.stdout == #"{"selected":null}"# + "\n")
        let after = try JSON(parsing: try await blectl(socket + ["--json", "call", "pos.terminals"]).stdout)
        #expect(after["selected"] == .null)
        let unknown = try await blectl(socket + ["call", "pos.select", #"{"terminal":"Lane-T9"}"#])
        #expect(unknown.stderr.contains("(1002)"), "\(unknown.stderr)")
        let refused = try await blectl(socket + ["call", "pos.pay", #"{"amount":100,"currency":"EUR"}"#])
        #expect(refused.stderr.contains("(1001)"), "no terminal selected: \(refused.stderr)")
        events.signal(SIGKILL)
        _ = await events.finish()
        #expect(await agent.stop().status == 0)
    }

    @Test(
        "pos.pay: one payment approved and one declined by the virtual terminal; the journal shows accepted, sent, final for both"
    )
    func approvedAndDeclined() async throws {
        let agent = try await RunningAgent(config: Self.config(deadlineSeconds: 30))
        let socket = ["--socket", agent.socketPath]
        #expect(await agent.child.waitForStderr(containing: "terminal LT-1, Acme Payments"))
        let approved = try JSON(
            parsing: try await blectl(
                socket + ["--json", "call", "pos.pay", #"{"amount":1250,"currency":"EUR","reference":"lane-1"}"#]
            ).stdout)
        #expect(approved["state"] == "approved", "\(approved)")
        #expect(approved["phase"] == "final")
        #expect(approved["terminal"] == "LT-1")
        #expect(approved["authCode"] == "A00001")
        let declined = try JSON(
            parsing: try await blectl(
                socket + ["--json", "call", "pos.pay", #"{"amount":990,"currency":"EUR","reference":"DECLINE-7"}"#]
            ).stdout)
        #expect(declined["state"] == "declined", "\(declined)")
        #expect(declined["phase"] == "final")

        let kinds = try journalKinds(agent)
        let first = try #require(approved["transactionId"]?.stringValue)
        let second = try #require(declined["transactionId"]?.stringValue)
        #expect(kinds.filter { $0.tx == first }.map(\.kind) == ["accepted", "sent", "final"], "\(kinds)")
        #expect(kinds.filter { $0.tx == second }.map(\.kind) == ["accepted", "sent", "final"], "\(kinds)")
        #expect(await agent.stop().status == 0)
    }

    @Test(
        "a link dropped while pos.pay waits: the caller gets 1003, the payment is reconciling, and after the reconnect it is settled approved with exactly one charge at the terminal"
    )
    func linkDroppedDuringWait() async throws {
        let agent = try await RunningAgent(config: Self.config(deadlineSeconds: 30))
        let socket = ["--socket", agent.socketPath]
        #expect(await agent.child.waitForStderr(containing: "terminal LT-1, Acme Payments"))
        let status = try JSON(parsing: try await blectl(socket + ["--json", "status"]).stdout)
        let bus = try #require(status["sim"]?["busAddress"]?.stringValue)
        let events = try await Child("\(buildDirectory)/blectl", socket + ["--json", "events", "--kind", "plugin"])
        #expect(await events.waitForStderr(containing: "streaming events"))

        let paying = try await Child(
            "\(buildDirectory)/blectl",
            socket + ["call", "pos.pay", #"{"amount":4200,"currency":"EUR","reference":"drop"}"#])
        // The request is written and acknowledged (journal `sent`), the final status is 1.5 s away: drop the link.
        #expect(await events.waitForStdout(containing: #""phase":"sent""#))
        let dropped = try await Child(
            "/usr/bin/dbus-send",
            [
                "--bus=\(bus)", "--print-reply", "--dest=org.bluez", "/org/blesim", "org.blesim.Control1.DropLink",
                "string:\(Self.nearestAddress)",
            ]
        ).finish()
        #expect(dropped.status == 0, "\(dropped.stderr)")
        let answer = await paying.finish()
        #expect(answer.stderr.contains("(1003)"), "\(answer.stderr)")
        #expect(await events.waitForStdout(containing: #""phase":"reconciling""#))
        // Reconnected, the lane asks the terminal about the payment and settles it.
        #expect(await events.waitForStdout(containing: #""state":"approved""#))
        let listed = try JSON(parsing: try await blectl(socket + ["--json", "call", "pos.transactions"]).stdout)
        let payment = try #require(listed["transactions"]?[0])
        #expect(payment["phase"] == "final")
        #expect(payment["state"] == "approved")
        #expect(payment["authCode"] == "A00001")
        // Exactly one charge: the terminal's next approval is its second.
        let next = try JSON(
            parsing: try await blectl(
                socket + ["--json", "call", "pos.pay", #"{"amount":100,"currency":"EUR","reference":"next"}"#]
            ).stdout)
        #expect(next["authCode"] == "A00002", "\(next)")
        let id = try #require(payment["transactionId"]?.stringValue)
        let kinds = try journalKinds(agent).filter { $0.tx == id }.map(\.kind)
        #expect(kinds.first == "accepted" && kinds.contains("reconciling") && kinds.last == "final", "\(kinds)")
        events.signal(SIGKILL)
        _ = await events.finish()
        #expect(await agent.stop().status == 0)
    }

    @Test(
        "with no final status by the deadline pos.pay answers 1003 and the payment is reconciling; the terminal's later final indication settles it"
    )
    func deadlineThenSettled() async throws {
        let agent = try await RunningAgent(config: Self.config(deadlineSeconds: 0.3))
        let socket = ["--socket", agent.socketPath]
        #expect(await agent.child.waitForStderr(containing: "terminal LT-1, Acme Payments"))
        let events = try await Child("\(buildDirectory)/blectl", socket + ["--json", "events", "--kind", "plugin"])
        #expect(await events.waitForStderr(containing: "streaming events"))
        let paid = try await blectl(
            socket + ["call", "pos.pay", #"{"amount":1250,"currency":"EUR","reference":"late"}"#])
        #expect(paid.stderr.contains("(1003)"), "\(paid.stderr)")
        #expect(paid.stderr.contains("deadline passed"), "\(paid.stderr)")
        let listed = try JSON(parsing: try await blectl(socket + ["--json", "call", "pos.transactions"]).stdout)
        #expect(listed["transactions"]?[0]?["phase"] == "reconciling")
        #expect(await events.waitForStdout(containing: #""state":"approved""#))
        let settled = try JSON(parsing: try await blectl(socket + ["--json", "call", "pos.transactions"]).stdout)
        #expect(settled["transactions"]?[0]?["phase"] == "final")
        events.signal(SIGKILL)
        _ = await events.finish()
        #expect(await agent.stop().status == 0)
    }

    /// The journal's (transaction id, kind) pairs in order.
    private func journalKinds(_ agent: RunningAgent) throws -> [(tx: String, kind: String)] {
        let bytes = try #require(readAll("\(agent.directory)/state/plugins/PaymentTerminalScanner/payments.journal"))
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").compactMap { line in
            guard let record = try? JSON(parsing: String(line.dropFirst(9))), let tx = record["tx"]?.stringValue,
                let kind = record["kind"]?.stringValue
            else { return nil }
            return (tx, kind)
        }
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
