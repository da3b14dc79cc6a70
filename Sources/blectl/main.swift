// blectl: the command-line client of bleagent's control API
// (docs/control-api.md). Exit status: 0 ok, 1 agent error, 64 usage, 69 unreachable.
import ControlProtocol
import Glibc
import JSON

signal(SIGPIPE, SIG_IGN)

var environment: [String: String] = [:]
if let value = getenv(ControlAPI.socketEnvironmentVariable) {
    environment[ControlAPI.socketEnvironmentVariable] = String(cString: value)
}

let invocation: Invocation
do {
    invocation = try Invocation.parse(Array(CommandLine.arguments.dropFirst()), environment: environment)
} catch {
    Output.write(2, "blectl: \(error.message)\n\n\(Usage.text)")
    exit(64)
}
guard let command = invocation.command else {
    Output.write(1, Usage.text)
    exit(0)
}
let context = RunContext(socketPath: invocation.socketPath, json: invocation.json)
do {
    exit(try command.run(context))
} catch {
    switch error {
    case .unreachable(let reason):
        Output.write(2, "blectl: agent unreachable: \(reason)\n")
        exit(69)
    case .agent(let rpcError):
        if context.json { context.print(RPCMessage.error(id: .null, rpcError)["error"]?.serialized() ?? "") }
        var text = "blectl: agent error: \(rpcError.message) (\(rpcError.code.rawValue))\n"
        let issues = (rpcError.data?["errors"]?.arrayValue ?? []).map { issue in
            let path = issue["path"]?.stringValue ?? ""
            return (path.isEmpty ? "" : path + ": ") + (issue["message"]?.stringValue ?? "")
        }
        // A lone problem the message already is (a params error) is not repeated.
        if issues != [rpcError.message] {
            for issue in issues { text += "  \(issue)\n" }
        }
        Output.write(2, text)
        exit(1)
    }
}
