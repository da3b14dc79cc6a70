import ControlProtocol
import JSON

/// The shape `blectl scan` and `blectl advertise` share: `start [OPTIONS]`
/// calls one method with the options as params (none: no params), `stop`
/// calls another without params; each prints its line.
struct StartStopCall: Sendable {
    let method: String
    let params: JSON?
    let done: String

    /// Parses `start` (its options read by `options` into the params) or `stop`.
    init(
        _ arguments: inout ArgumentCursor, command: String, start: (method: String, done: String),
        stop: (method: String, done: String),
        options: (inout ArgumentCursor, inout JSONObject) throws(UsageError) -> Void
    ) throws(UsageError) {
        switch try arguments.positional("start or stop") {
        case "start":
            var params = JSONObject()
            try options(&arguments, &params)
            (method, done) = start
            self.params = params.isEmpty ? nil : .object(params)
        case "stop":
            (method, done) = stop
            params = nil
        case let other:
            throw UsageError("\(command) takes start or stop, not \"\(other)\"")
        }
    }

    func run(_ context: RunContext) throws(ClientFailure) -> Int32 {
        let result = try context.connect().call(method, params: params)
        context.show(result) { _ in done }
        return 0
    }
}
