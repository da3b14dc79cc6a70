import BLETesting
import JSON
import Testing

/// A control API client that sends raw bytes (hostile lines blectl would
/// never write) and awaits the agent's lines, read on the shared loop, with
/// the test deadline.
final class RawControlClient: Sendable {
    private let socket: LineSocket

    init(path: String) throws {
        socket = try LineSocket(path: path)
    }

    /// Sends `text` as it is (add the newline yourself).
    func send(_ text: String) async {
        await socket.send(bytes: Array(text.utf8))
    }

    /// The next line, or nil at the end of the stream; records an issue past the deadline.
    func readLine() async -> String? {
        await socket.readLine()
    }

    /// The next line that is not an event notification, parsed.
    func reply() async -> JSON? {
        while let line = await readLine() {
            guard let json = try? JSON(parsing: line) else {
                Issue.record("not JSON: \(line)")
                return nil
            }
            if json["method"] == "event" { continue }
            return json
        }
        return nil
    }

    /// Sends one request line and returns its reply.
    func call(_ method: String, params: String? = nil, id: Int = 1) async -> JSON? {
        let paramsMember = params.map { #","params":\#($0)"# } ?? ""
        await send(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)"\#(paramsMember)}"# + "\n")
        return await reply()
    }

    /// The next event notification of `kind` whose data satisfies `accept`.
    func event(_ kind: String, where accept: (JSON) -> Bool = { _ in true }) async -> JSON? {
        while let line = await readLine() {
            guard let json = try? JSON(parsing: line), json["method"] == "event",
                json["params"]?["kind"]?.stringValue == kind, let data = json["params"]?["data"]
            else { continue }
            if accept(data) { return data }
        }
        return nil
    }
}
