import ControlProtocol

/// A command line that cannot be run: the message, printed above the usage.
struct UsageError: Error, Equatable {
    let message: String
    init(_ message: String) { self.message = message }
}

/// The arguments still to be read, front to back.
struct ArgumentCursor {
    private var remaining: ArraySlice<String>

    init(_ arguments: some Sequence<String>) { remaining = ArraySlice(arguments) }

    var isEmpty: Bool { remaining.isEmpty }

    /// The next argument, which must exist and not be an option.
    mutating func positional(_ name: String) throws(UsageError) -> String {
        guard let next = remaining.first, !next.hasPrefix("--") else { throw UsageError("missing \(name)") }
        remaining.removeFirst()
        return next
    }

    /// The next argument if it is not an option.
    mutating func optionalPositional() -> String? {
        guard let next = remaining.first, !next.hasPrefix("--") else { return nil }
        remaining.removeFirst()
        return next
    }

    /// Removes `--flag` wherever it is among the remaining arguments.
    mutating func flag(_ name: String) -> Bool {
        guard let index = remaining.firstIndex(of: name) else { return false }
        remaining.remove(at: index)
        return true
    }

    /// Removes every `--name VALUE` pair and returns the values in order.
    mutating func values(_ name: String) throws(UsageError) -> [String] {
        var values: [String] = []
        while let index = remaining.firstIndex(of: name) {
            let valueIndex = remaining.index(after: index)
            guard valueIndex < remaining.endIndex, !remaining[valueIndex].hasPrefix("--") else {
                throw UsageError("\(name) needs a value")
            }
            values.append(remaining[valueIndex])
            remaining.removeSubrange(index...valueIndex)
        }
        return values
    }

    /// Fails if anything is left.
    func finish() throws(UsageError) {
        guard let first = remaining.first else { return }
        throw UsageError(first.hasPrefix("--") ? "unknown option \(first)" : "unexpected argument \"\(first)\"")
    }
}

/// A blectl command: parsed and validated before it runs.
protocol BlectlCommand: Sendable {
    /// The command's name on the command line.
    static var name: String { get }
    /// Parses and validates the command's arguments.
    init(_ arguments: inout ArgumentCursor) throws(UsageError)
    /// Runs the command against the agent; returns the exit status.
    func run(_ context: RunContext) throws(ClientFailure) -> Int32
}

/// What the whole command line asked for.
struct Invocation {
    /// The socket to use.
    var socketPath: String
    /// Print raw JSON.
    var json: Bool
    /// The command, or `nil` for `--help`.
    var command: (any BlectlCommand)?

    static let commands: [any BlectlCommand.Type] = [
        StatusCommand.self, ReloadCommand.self, ShutdownCommand.self, EventsCommand.self, CallCommand.self,
        FleetCommand.self,
        ScanCommand.self, DevicesCommand.self, ConnectCommand.self, DisconnectCommand.self, ServicesCommand.self,
        ReadCommand.self, WriteCommand.self, SubscribeCommand.self, AdvertiseCommand.self, PublishedCommand.self,
        UpdateCommand.self, SubscribersCommand.self, GatewayCommand.self,
    ]

    /// Parses `arguments` (without the program name).
    static func parse(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Invocation {
        var socket: String?
        var json = false
        var rest = arguments[...]
        while let first = rest.first, first.hasPrefix("--") {
            rest.removeFirst()
            switch first {
            case "--socket":
                guard let path = rest.popFirst(), !path.isEmpty else { throw UsageError("--socket needs a path") }
                socket = path
            case "--json": json = true
            case "--help": return Invocation(socketPath: "", json: json, command: nil)
            default: throw UsageError("unknown option \(first)")
            }
        }
        guard let name = rest.popFirst() else { throw UsageError("missing command") }
        guard let type = commands.first(where: { $0.name == name }) else {
            throw UsageError("unknown command \"\(name)\"")
        }
        var cursor = ArgumentCursor(rest)
        if cursor.flag("--json") { json = true }
        if let path = try cursor.values("--socket").last { socket = path }
        let command = try type.init(&cursor)
        try cursor.finish()
        let path =
            socket ?? environment[ControlAPI.socketEnvironmentVariable].flatMap { $0.isEmpty ? nil : $0 }
            ?? ControlAPI.defaultSocketPath
        return Invocation(socketPath: path, json: json, command: command)
    }
}
