import ControlProtocol
import JSON

/// `blectl status`: agent.status as a table.
struct StatusCommand: BlectlCommand {
    static let name = "status"
    init(_ arguments: inout ArgumentCursor) throws(UsageError) {}

    func run(_ context: RunContext) throws(ClientFailure) -> Int32 {
        let status = try context.connect().call("agent.status")
        context.show(status, human: Self.render)
        return 0
    }

    static func render(_ status: JSON) -> String {
        let roleState = status["roleState"]
        let state = [roleState?["state"]?.stringValue, roleState?["reason"]?.stringValue].compactMap { $0 }
        var rows: [(String, String)] = [
            (
                "agent",
                "\(Output.cell(status["agent"])) \(Output.cell(status["version"])) (control API \(Output.cell(status["apiVersion"])))"
            ),
            ("pid", Output.cell(status["pid"])),
            ("uptime", status["uptimeSeconds"]?.intValue.map { Output.duration(seconds: $0) } ?? "-"),
            ("config", Output.cell(status["config"])),
            ("role", "\(Output.cell(status["role"])) (plugin \(Output.cell(status["plugin"])))"),
            ("backend", "\(Output.cell(status["backend"])), adapter \(Output.cell(status["adapter"]))"),
            ("state", state.joined(separator: ": ")),
        ]
        if let recovery = recoveryLine(status["recovery"]) { rows.append(("recovery", recovery)) }
        return Output.table(rows)
    }

    /// "N backends lost (last: why); M restarts, K left the role running; attempt A waiting", once a backend
    /// was lost; nil before.
    static func recoveryLine(_ recovery: JSON?) -> String? {
        guard let recovery, let losses = recovery["backendLosses"]?.intValue, losses > 0 else { return nil }
        var line = "\(losses) backend\(losses == 1 ? "" : "s") lost"
        if let last = recovery["lastLoss"]?.stringValue { line += " (last: \(last))" }
        let restarts = recovery["restarts"]?.intValue ?? 0
        line += "; \(restarts) restart\(restarts == 1 ? "" : "s"), \(Output.cell(recovery["restartsSucceeded"]))"
        line += " left the role running"
        if let attempt = recovery["pendingRestart"]?["attempt"]?.intValue { line += "; attempt \(attempt) waiting" }
        return line
    }
}

/// `blectl reload`: agent.reload.
struct ReloadCommand: BlectlCommand {
    static let name = "reload"
    init(_ arguments: inout ArgumentCursor) throws(UsageError) {}

    func run(_ context: RunContext) throws(ClientFailure) -> Int32 {
        let status = try context.connect().call("agent.reload")
        context.show(status) { "reloaded: role \(Output.cell($0["role"])), backend \(Output.cell($0["backend"]))" }
        return 0
    }
}

/// `blectl shutdown`: agent.shutdown.
struct ShutdownCommand: BlectlCommand {
    static let name = "shutdown"
    init(_ arguments: inout ArgumentCursor) throws(UsageError) {}

    func run(_ context: RunContext) throws(ClientFailure) -> Int32 {
        let result = try context.connect().call("agent.shutdown")
        context.show(result) { _ in "the agent is stopping" }
        return 0
    }
}

/// `blectl events [--kind KIND]...`: subscribe and print events until the
/// agent closes the connection or blectl is interrupted.
struct EventsCommand: BlectlCommand {
    static let name = "events"
    let kinds: [EventKind]

    init(_ arguments: inout ArgumentCursor) throws(UsageError) {
        kinds = try arguments.values("--kind").map { (name: String) throws(UsageError) -> EventKind in
            guard let kind = EventKind(rawValue: name) else {
                throw UsageError(
                    "unknown event kind \"\(name)\" (\(EventKind.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            return kind
        }
    }

    func run(_ context: RunContext) throws(ClientFailure) -> Int32 {
        let client = try context.connect()
        let params: JSON? = kinds.isEmpty ? nil : ["kinds": .array(kinds.map { .string($0.rawValue) })]
        let subscribed = try client.call("events.subscribe", params: params)
        let names = (subscribed["kinds"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: ", ")
        Output.write(2, "blectl: streaming events (\(names)); interrupt to stop\n")
        try EventPrinter(context: context).stream(client)
        return 0
    }
}

/// Prints event notifications, one per line.
struct EventPrinter {
    let context: RunContext

    func stream(_ client: ControlClient, only kind: EventKind? = nil) throws(ClientFailure) {
        while let (method, params) = try client.nextNotification() {
            guard method == ControlAPI.eventMethod, let params else { continue }
            if let kind, params["kind"]?.stringValue != kind.rawValue { continue }
            context.show(params) { params in
                let dropped = params["dropped"]?.intValue ?? 0
                let note = dropped > 0 ? " (\(dropped) dropped)" : ""
                return "\(Output.cell(params["kind"]))\(note) \(params["data"]?.serialized() ?? "null")"
            }
        }
    }
}

/// `blectl call METHOD [PARAMS_JSON]`: any method, result printed as JSON.
struct CallCommand: BlectlCommand {
    static let name = "call"
    let method: String
    let params: JSON?

    init(_ arguments: inout ArgumentCursor) throws(UsageError) {
        method = try arguments.positional("METHOD")
        guard ControlAPI.namespace(of: method) != nil else {
            throw UsageError("\"\(method)\" is not a method name (namespace.name)")
        }
        if let text = arguments.optionalPositional() {
            do {
                let parsed = try JSON(parsing: text)
                guard parsed.objectValue != nil || parsed.arrayValue != nil else {
                    throw UsageError("PARAMS_JSON must be a JSON object or array")
                }
                params = parsed
            } catch let error as UsageError {
                throw error
            } catch {
                throw UsageError("PARAMS_JSON is not valid JSON: \(error)")
            }
        } else {
            params = nil
        }
    }

    func run(_ context: RunContext) throws(ClientFailure) -> Int32 {
        let result = try context.connect().call(method, params: params)
        context.print(context.json ? result.serialized(.compact) : result.serialized(.pretty))
        return 0
    }
}
