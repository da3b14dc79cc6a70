import ControlProtocol
import JSON

/// `blectl fleet status`: fleet.status as a table (the broker connection,
/// the outbox, the last error).
struct FleetCommand: BlectlCommand {
    static let name = "fleet"

    init(_ arguments: inout ArgumentCursor) throws(UsageError) {
        let sub = try arguments.positional("status")
        guard sub == "status" else { throw UsageError("fleet takes status, not \"\(sub)\"") }
    }

    func run(_ context: RunContext) throws(ClientFailure) -> Int32 {
        let status = try context.connect().call("fleet.status")
        context.show(status, human: Self.render)
        return 0
    }

    static func render(_ status: JSON) -> String {
        guard status["enabled"]?.boolValue == true else { return "fleet: not configured (no fleet section)" }
        let outbox = status["outbox"]
        let events = status["events"]
        let connected = status["connected"]?.boolValue == true
        var rows: [(String, String)] = [
            ("broker", "\(Output.cell(status["broker"])) (MQTT \(Output.cell(status["protocol"])))"),
            ("node", "\(Output.cell(status["node"])), prefix \(Output.cell(status["prefix"]))"),
            ("connection", connected ? "connected" : "not connected"),
            ("connections", Output.cell(status["connections"])),
            (
                "outbox",
                "\(Output.cell(outbox?["depth"])) waiting of \(Output.cell(outbox?["maxRecords"])), "
                    + "\(Output.cell(outbox?["delivered"])) delivered, \(Output.cell(outbox?["refused"])) refused"
            ),
            (
                "events",
                "\(Output.cell(events?["published"])) published, \(Output.cell(events?["dropped"])) dropped, "
                    + "\(Output.cell(events?["queued"])) queued"
            ),
        ]
        // Relayed devices (the sensor gateway's sensors), once a plugin has relayed any.
        if let devices = status["devices"],
            (devices["tracked"]?.intValue ?? 0) + (devices["departed"]?.intValue ?? 0) > 0
        {
            rows.append(
                (
                    "devices",
                    "\(Output.cell(devices["tracked"])) relayed, \(Output.cell(devices["published"])) messages, "
                        + "\(Output.cell(devices["merged"])) merged, \(Output.cell(devices["dropped"])) dropped, "
                        + "\(Output.cell(devices["departed"])) departed"
                ))
        }
        rows.append(("last error", Output.cell(status["lastError"])))
        return Output.table(rows)
    }
}
