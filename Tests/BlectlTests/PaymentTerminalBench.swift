import Glibc
import JSON
import Testing

/// A private dbus-daemon and blesim serving a payment scenario, apart from
/// any agent: the terminals outlive every lane (agent) started against them,
/// crashes included. blesim's `org.blesim.Control1` is reached with busctl.
/// Everything is killed, reaped and removed when the bench goes away.
final class PaymentTerminalBench {
    let directory = makeTemporaryDirectory()
    /// The private bus (what the agents get as DBUS_SYSTEM_BUS_ADDRESS).
    let address: String
    private let daemon: Child
    private let blesim: Child

    /// Starts the bus and blesim with `scenario` (a file of Tests/BlectlTests/Fixtures);
    /// ready once blesim printed its ready line.
    init(scenario: String) throws {
        address = "unix:path=\(directory)/bus"
        daemon = try Child(
            "/usr/bin/dbus-daemon", ["--session", "--nofork", "--print-address=1", "--address=\(address)"])
        guard daemon.waitForStdout(containing: "unix:path=") else {
            kill(daemon.pid, SIGKILL)
            _ = daemon.finish()
            throw ChildError(description: "dbus-daemon did not start")
        }
        // blesim's diagnostics go to a file, so that a long run never fills a pipe nobody reads.
        let blesimPath = "\(buildDirectory)/blesim"
        let fixture = "\(repositoryRoot)/Tests/BlectlTests/Fixtures/\(scenario)"
        do {
            blesim = try Child(
                "/bin/sh",
                [
                    "-c",
                    "exec '\(blesimPath)' --address '\(address)' --scenario '\(fixture)' 2>>'\(directory)/blesim.log'",
                ])
        } catch {
            kill(daemon.pid, SIGKILL)
            _ = daemon.finish()
            throw error
        }
        guard blesim.waitForStdout(containing: "blesim: ready") else {
            kill(blesim.pid, SIGKILL)
            kill(daemon.pid, SIGKILL)
            _ = blesim.finish()
            _ = daemon.finish()
            throw ChildError(description: "blesim did not become ready")
        }
    }

    deinit {
        kill(blesim.pid, SIGKILL)
        _ = blesim.finish()
        kill(daemon.pid, SIGKILL)
        _ = daemon.finish()
        _ = "rm -rf '\(directory)'".withCString { system($0) }
    }

    /// Calls `org.blesim.Control1.<method>` with busctl; the reply's `data` (busctl's JSON).
    @discardableResult
    func control(_ method: String, _ signature: String = "", _ arguments: [String] = []) throws -> JSON {
        let call =
            ["--address=\(address)", "--json=short", "call", "org.bluez", "/org/blesim", "org.blesim.Control1", method]
            + (signature.isEmpty ? [] : [signature] + arguments)
        let result = try Child("/usr/bin/busctl", call).finish()
        guard result.status == 0 else {
            throw ChildError(description: "Control1.\(method) \(arguments): \(result.stderr)")
        }
        guard !result.stdout.isEmpty else { return .null }
        return try JSON(parsing: result.stdout)["data"] ?? .null
    }

    /// The terminal side of every payment: `Control1.TerminalTransactions(address)`.
    func terminalTransactions(_ terminal: String) throws -> [TerminalRecord] {
        let data = try control("TerminalTransactions", "s", [terminal])
        return (data[0]?.arrayValue ?? []).compactMap { item in
            guard let fields = item.arrayValue, fields.count == 6, let id = fields[0].stringValue,
                let state = fields[1].stringValue, let amount = fields[2].intValue,
                let currency = fields[3].stringValue, let reference = fields[4].stringValue,
                let charges = fields[5].intValue
            else { return nil }
            return TerminalRecord(
                transactionID: id, state: state, amount: amount, currency: currency, reference: reference,
                charges: Int(charges))
        }
    }
}

/// One transaction as blesim's virtual terminal recorded it.
struct TerminalRecord: Equatable {
    var transactionID: String
    var state: String
    var amount: Int64
    var currency: String
    var reference: String
    var charges: Int
}

/// One bleagent (central role, the scanner plugin, backend bluez) on a
/// bench's private bus, in a state directory that outlives it: a lane that
/// can be killed and started again on the same journal.
final class LaneAgent {
    let child: Child
    let directory: String
    private var reaped = false

    var socket: [String] { ["--socket", "\(directory)/run/control.sock"] }
    static func journalPath(_ directory: String) -> String {
        "\(directory)/state/plugins/PaymentTerminalScanner/payments.journal"
    }

    /// Writes the config (once) and starts the agent; `crashAt` arms the
    /// scanner's test hook (`BLEAGENT_POS_CRASH_AT`). The default config has no settle period: the bench has
    /// one terminal, and the crash test restarts the lane a hundred times.
    init(
        bench: PaymentTerminalBench, directory: String,
        scanner: String = #"{"paymentDeadlineSeconds": 10, "settle": 0}"#,
        crashAt: String? = nil, fleet: String? = nil
    ) throws {
        self.directory = directory
        writeFile(
            "\(directory)/roles.json",
            """
            {
              "version": 1, "role": "central", "backend": "bluez",
              "control": { "socket": "run/control.sock" },
              "restore": { "stateDirectory": "state" },
              "pluginDirectory": "\(buildDirectory)",
              "roles": { "central": { "plugin": "PaymentTerminalScanner", "config": \(scanner) } }\(fleet.map { ",\n  " + $0 } ?? "")
            }
            """)
        var environment = ["DBUS_SYSTEM_BUS_ADDRESS": bench.address]
        if let crashAt { environment["BLEAGENT_POS_CRASH_AT"] = crashAt }
        child = try Child(
            "\(buildDirectory)/bleagent", ["--config", "\(directory)/roles.json"], environment: environment)
    }

    deinit { _ = kill(9) }

    /// Sends SIGKILL (if still running) and reaps it; its stderr.
    func kill(_ signal: Int32 = SIGKILL) -> String {
        guard !reaped else { return child.stderrText }
        reaped = true
        Glibc.kill(child.pid, signal)
        return child.finish().stderr
    }

    /// Waits for it to die by itself (the crash hook) and reaps it; its exit status.
    func waitForDeath() -> Int32 {
        reaped = true
        return child.finish().status
    }

    /// Runs `blectl --json call method params` against it; the result, or nil on an error.
    func call(_ method: String, _ params: String? = nil) throws -> JSON? {
        let result = try blectl(socket + ["--json", "call", method] + (params.map { [$0] } ?? []))
        guard result.status == 0 else { return nil }
        return try JSON(parsing: result.stdout)
    }

    /// Every payment in the lane's journal, as pos.transactions lists them.
    func payments() throws -> [JSON] {
        try call("pos.transactions", #"{"limit": 1000}"#)?["transactions"]?.arrayValue ?? []
    }
}
