import AgentCore
import BLETesting
import ControlProtocol
import Glibc
import IO
import JSON
import RoleKit
import Synchronization
import Testing

/// A client over a real socket: lines are read on the shared loop as they arrive and awaited with a deadline.
final class TestClient: Sendable {
    let socket: LineSocket
    private let nextID = Mutex<Int64>(0)

    init(path: String) throws {
        socket = try LineSocket(path: path)
    }

    /// A client over a socket connected before (and not read until now).
    init(adopting fd: FileDescriptor) throws {
        socket = try LineSocket(adopting: fd)
    }

    var fd: Int32 { socket.fd.rawValue }

    func sendLine(_ text: String) async { await socket.sendLine(text) }

    /// The next line, or `nil` at end of stream; fails the test past the deadline.
    func readLine() async -> String? { await socket.readLine() }

    /// The next line parsed as JSON.
    func readJSON() async -> JSON? {
        guard let line = await readLine() else { return nil }
        return try? JSON(parsing: line)
    }

    /// Sends a request and returns its reply (skipping notifications).
    func call(_ method: String, _ params: JSON? = nil) async -> JSON? {
        let id = nextID.withLock { id in
            id += 1
            return id
        }
        await sendLine(RPCMessage.request(id: .number(id), method: method, params: params).serialized())
        while let reply = await readJSON() {
            if reply["id"] == .int(id) { return reply }
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
        loop = try EventLoop.start(name: "test-control")
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
