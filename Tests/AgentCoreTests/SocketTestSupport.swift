import AgentCore
import ControlProtocol
import Glibc
import JSON
import RoleKit
import Testing

/// A fresh directory under /tmp, removed (with what is in it) by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() {
        var template = Array("/tmp/bleagent-test-XXXXXX".utf8CString)
        _ = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func remove() {
        var status = stat()
        guard stat(path, &status) == 0 else { return }
        _ = "rm -rf '\(path)'".withCString { system($0) }
    }
}

/// How long a test waits for something that should happen at once.
let deadlineMilliseconds: Int32 = 20_000

/// A client over a real socket that reads lines with a deadline.
final class TestClient {
    let fd: Int32
    private var buffer: [UInt8] = []
    private var nextID: Int64 = 0

    init(path: String) throws {
        fd = try UnixSocket.connect(to: path)
    }

    deinit { close(fd) }

    func sendLine(_ text: String) {
        let bytes = Array((text + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { return }
            offset += written
        }
    }

    /// The next line, or `nil` at end of stream; fails the test past the deadline.
    func readLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, deadlineMilliseconds) == 1 else {
                Issue.record("no line within the deadline")
                return nil
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return nil }
            buffer += chunk[..<count]
        }
    }

    /// The next line parsed as JSON.
    func readJSON() -> JSON? {
        guard let line = readLine() else { return nil }
        return try? JSON(parsing: line)
    }

    /// Sends a request and returns its reply (skipping notifications).
    func call(_ method: String, _ params: JSON? = nil) -> JSON? {
        nextID += 1
        sendLine(RPCMessage.request(id: .number(nextID), method: method, params: params).serialized())
        while let reply = readJSON() {
            if reply["id"] == .int(nextID) { return reply }
        }
        return nil
    }
}

/// A control server on its own loop thread in a temporary directory.
final class ServerHarness {
    let directory = TemporaryDirectory()
    let loop: EventLoop
    let registry = MethodRegistry()
    let bus = EventBus()
    let server: ControlServer
    var socketPath: String { server.options.socketPath }

    init(configure: (inout ControlServerOptions) -> Void = { _ in }) throws {
        loop = try EventLoop()
        var options = ControlServerOptions(
            socketPath: "\(directory.path)/control.sock", policy: PeerPolicy(allowedUids: [], ownUid: geteuid()))
        configure(&options)
        server = ControlServer(options: options, loop: loop, registry: registry, bus: bus)
        try registry.registerBuiltin("test.echo", params: .any) { call in call.params ?? .null }
        try registry.registerBuiltin("test.fail", params: .none) { _ in
            throw RPCError(.roleNotRunning, "no role", data: ["why": "test"])
        }
        try registry.registerBuiltin("test.crash", params: .none) { _ in throw TestFailure() }
        try server.start()
        loop.runOnNewThread()
    }

    func client() throws -> TestClient { try TestClient(path: socketPath) }

    func shutDown() {
        let server = self.server
        let loop = self.loop
        loop.execute {
            server.close()
            loop.stop()
        }
    }

    deinit {
        directory.remove()
    }
}

/// An error that is not an RPCError.
struct TestFailure: Error, CustomStringConvertible {
    var description: String { "something broke" }
}
