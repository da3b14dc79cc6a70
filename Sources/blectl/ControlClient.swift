import ControlProtocol
import Glibc
import JSON

/// Why blectl could not finish: the exit status it maps to.
enum ClientFailure: Error {
    /// The agent cannot be reached or went away (exit 69).
    case unreachable(String)
    /// The agent answered with an error (exit 1).
    case agent(RPCError)
}

/// A blocking JSON-RPC client over the agent's socket, one line per message.
final class ControlClient {
    private let fd: Int32
    private var buffer: [UInt8] = []
    private var nextID: Int64 = 0
    /// Notifications read while waiting for a reply, oldest first.
    private var pendingNotifications: [(method: String, params: JSON?)] = []

    /// How long ``call(_:params:)`` waits for its reply.
    static let replyTimeoutMilliseconds: Int32 = 30_000

    /// Connects to `path`.
    init(path: String) throws(ClientFailure) {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .unreachable("socket: \(Self.lastError())") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            throw .unreachable("cannot connect to \(path): the path is too long for a Unix socket")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            let reason = Self.lastError()
            close(fd)
            throw .unreachable("cannot connect to \(path): \(reason)")
        }
        self.fd = fd
    }

    deinit { close(fd) }

    private static func lastError() -> String { String(cString: strerror(errno)) }

    /// Sends a request and waits for its reply; notifications that arrive
    /// first are kept for ``nextNotification()``.
    func call(_ method: String, params: JSON? = nil) throws(ClientFailure) -> JSON {
        nextID += 1
        let id = RPCID.number(nextID)
        try send(RPCMessage.request(id: id, method: method, params: params))
        while true {
            let message = try readMessage(timeoutMilliseconds: Self.replyTimeoutMilliseconds)
            switch message {
            case .response(let replyID, let result) where replyID == id:
                switch result {
                case .success(let value): return value
                case .failure(let error): throw .agent(error)
                }
            case .response(.null, .failure(let error)) where Self.isRefusal(error):
                throw Self.refused(error)
            case .response:
                continue
            case .notification(let method, let params):
                pendingNotifications.append((method, params))
            }
        }
    }

    /// The next notification, waiting for it; `nil` when the agent closes the connection.
    func nextNotification() throws(ClientFailure) -> (method: String, params: JSON?)? {
        if !pendingNotifications.isEmpty { return pendingNotifications.removeFirst() }
        while true {
            let message: RPCIncoming
            do {
                message = try readMessage()
            } catch {
                if case .unreachable = error { return nil }
                throw error
            }
            if case .notification(let method, let params) = message { return (method, params) }
        }
    }

    private func send(_ message: JSON) throws(ClientFailure) {
        var bytes = Array(message.serialized(.compact).utf8)[...] + [UInt8(ascii: "\n")]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR { continue }
                let reason = "cannot send to the agent: \(Self.lastError())"
                // The agent refuses a connection by writing one error line and closing it, which
                // fails a write that comes after (EPIPE): the line says why, so read it first.
                throw waitingRefusal() ?? .unreachable(reason)
            }
            bytes = bytes.dropFirst(written)
        }
    }

    /// The refusal the agent wrote before closing the connection, if one is
    /// waiting to be read (or arrives within a second).
    private func waitingRefusal() -> ClientFailure? {
        while let message = try? readMessage(timeoutMilliseconds: 1000) {
            if case .response(.null, .failure(let error)) = message, Self.isRefusal(error) {
                return Self.refused(error)
            }
        }
        return nil
    }

    /// Whether `error` refuses the connection itself (not authorized, too many clients).
    private static func isRefusal(_ error: RPCError) -> Bool {
        [.tooManyClients, .notAuthorized].contains(error.code)
    }

    private static func refused(_ error: RPCError) -> ClientFailure {
        .unreachable("the agent refused the connection: \(error.message) (\(error.code.rawValue))")
    }

    /// The next message; waits at most `timeoutMilliseconds` for data (-1: forever).
    private func readMessage(timeoutMilliseconds: Int32 = -1) throws(ClientFailure) -> RPCIncoming {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[..<newline]
                defer { buffer.removeSubrange(...newline) }
                guard let json = try? JSON(parsing: line, options: JSONParseOptions(maxInputBytes: line.count + 1)),
                    let message = RPCIncoming(json)
                else {
                    throw .unreachable("the agent sent something that is not JSON-RPC")
                }
                return message
            }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, timeoutMilliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready != 0 else {
                throw .unreachable("the agent did not reply within \(timeoutMilliseconds / 1000) seconds")
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                throw .unreachable(
                    count == 0 ? "the agent closed the connection" : "cannot read from the agent: \(Self.lastError())")
            }
            buffer += chunk[..<count]
        }
    }
}
