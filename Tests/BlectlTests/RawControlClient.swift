import Glibc
import JSON
import Testing

/// A control API client that sends raw bytes (hostile lines blectl would
/// never write) and reads the agent's lines with the test deadline.
final class RawControlClient {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            throw ChildError(description: "cannot connect to \(path): errno \(errno)")
        }
    }

    deinit { close(fd) }

    /// Sends `text` as it is (add the newline yourself).
    func send(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }

    /// The next line, or nil at the end of the stream; records an issue past the deadline.
    func readLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                defer { buffer.removeSubrange(...newline) }
                return String(decoding: buffer[..<newline], as: UTF8.self)
            }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, deadlineMilliseconds) == 1 else {
                Issue.record("no line from the agent within the deadline")
                return nil
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = recv(fd, &chunk, chunk.count, 0)
            if count <= 0 { return nil }
            buffer += chunk[..<count]
        }
    }

    /// The next line that is not an event notification, parsed.
    func reply() -> JSON? {
        while let line = readLine() {
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
    func call(_ method: String, params: String? = nil, id: Int = 1) -> JSON? {
        let paramsMember = params.map { #","params":\#($0)"# } ?? ""
        send(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)"\#(paramsMember)}"# + "\n")
        return reply()
    }

    /// The next event notification of `kind` whose data satisfies `accept`.
    func event(_ kind: String, where accept: (JSON) -> Bool = { _ in true }) -> JSON? {
        while let line = readLine() {
            guard let json = try? JSON(parsing: line), json["method"] == "event",
                json["params"]?["kind"]?.stringValue == kind, let data = json["params"]?["data"]
            else { continue }
            if accept(data) { return data }
        }
        return nil
    }
}
