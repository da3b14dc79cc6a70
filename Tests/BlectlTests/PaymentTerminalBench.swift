import BLETesting
import Glibc
import IO
import JSON
import Testing

/// A private dbus-daemon and blesim serving a payment scenario, apart from
/// any agent: the terminals outlive every lane (agent) started against them,
/// crashes included. blesim's `org.blesim.Control1` is reached with busctl.
/// Everything is killed when the bench goes away (the shared loop reaps it) and its directory removed.
final class PaymentTerminalBench {
    let directory = makeTemporaryDirectory()
    /// The private bus (what the agents get as DBUS_SYSTEM_BUS_ADDRESS).
    let address: String
    private let daemon: Child
    private let blesim: Child

    /// Starts the bus and blesim with `scenario` (a file of Tests/BlectlTests/Fixtures);
    /// ready once blesim printed its ready line.
    init(scenario: String) async throws {
        address = "unix:path=\(directory)/bus"
        daemon = try await Child(
            "/usr/bin/dbus-daemon", ["--session", "--nofork", "--print-address=1", "--address=\(address)"])
        guard await daemon.waitForStdout(containing: "unix:path=") else {
            daemon.signal(SIGKILL)
            throw ChildError(description: "dbus-daemon did not start")
        }
        // blesim's diagnostics go to a file, so that a long run never fills a pipe nobody reads.
        let blesimPath = "\(buildDirectory)/blesim"
        let fixture = "\(repositoryRoot)/Tests/BlectlTests/Fixtures/\(scenario)"
        do {
            blesim = try await Child(
                "/bin/sh",
                [
                    "-c",
                    "exec '\(blesimPath)' --address '\(address)' --scenario '\(fixture)' 2>>'\(directory)/blesim.log'",
                ])
        } catch {
            daemon.signal(SIGKILL)
            throw error
        }
        guard await blesim.waitForStdout(containing: "blesim: ready") else {
            blesim.signal(SIGKILL)
            daemon.signal(SIGKILL)
            throw ChildError(description: "blesim did not become ready")
        }
    }

    deinit {
        blesim.signal(SIGKILL)
        daemon.signal(SIGKILL)
        let directory = self.directory
        BlockingPool.shared.submit { removeTree(directory) }
    }

    /// Calls `org.blesim.Control1.<method>` with busctl; the reply's `data` (busctl's JSON).
    @discardableResult
    func control(_ method: String, _ signature: String = "", _ arguments: [String] = []) async throws -> JSON {
        let call =
            ["--address=\(address)", "--json=short", "call", "org.bluez", "/org/blesim", "org.blesim.Control1", method]
            + (signature.isEmpty ? [] : [signature] + arguments)
        let result = try await Child("/usr/bin/busctl", call).finish()
        guard result.status == 0 else {
            throw ChildError(
                description: "Control1.\(method) \(arguments): busctl exited \(result.status): \(result.stderr)")
        }
        guard !result.stdout.isEmpty else { return .null }
        return try JSON(parsing: result.stdout)["data"] ?? .null
    }

    /// The terminal side of every payment: `Control1.TerminalTransactions(address)`.
    func terminalTransactions(_ terminal: String) async throws -> [TerminalRecord] {
        let data = try await control("TerminalTransactions", "s", [terminal])
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
    ) async throws {
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
        child = try await Child(
            "\(buildDirectory)/bleagent", ["--config", "\(directory)/roles.json"], environment: environment)
    }

    deinit { child.signal(SIGKILL) }

    /// Sends `signal` (if still running) and waits for the exit; its stderr.
    func kill(_ signal: Int32 = SIGKILL) async -> String {
        guard !reaped else { return child.stderrText }
        reaped = true
        child.signal(signal)
        return await child.finish().stderr
    }

    /// Waits for it to die by itself (the crash hook); its exit status.
    func waitForDeath() async -> Int32 {
        reaped = true
        return await child.finish().status
    }

    /// Runs `blectl --json call method params` against it; the result, or nil on an error.
    func call(_ method: String, _ params: String? = nil) async throws -> JSON? {
        let result = try await blectl(socket + ["--json", "call", method] + (params.map { [$0] } ?? []))
        guard result.status == 0 else { return nil }
        return try JSON(parsing: result.stdout)
    }

    /// Every payment in the lane's journal, as pos.transactions lists them.
    func payments() async throws -> [JSON] {
        try await call("pos.transactions", #"{"limit": 1000}"#)?["transactions"]?.arrayValue ?? []
    }
}
