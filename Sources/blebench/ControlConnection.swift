import Glibc
import JSON

/// A connection to an agent's control socket (JSON-RPC, one message per line), blocking with deadlines.
final class ControlConnection {
    private let fd: Int32
    private let reader: LineReader
    private var nextID: Int64 = 1

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BenchFailure("socket: \(String(cString: strerror(errno)))") }
        reader = LineReader(fd: fd)
        do {
            try withAddress(path) { address, length in
                guard connect(fd, address, length) == 0 else {
                    throw BenchFailure("connect \(path): \(String(cString: strerror(errno)))")
                }
            }
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    deinit { Glibc.close(fd) }

    /// Sends one request and returns its reply line (the agent answers each request once; one at a time here).
    func roundTrip(_ line: String, timeout: Double) throws -> String {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                throw BenchFailure("control socket: send failed: \(String(cString: strerror(errno)))")
            }
            offset += count
        }
        guard let reply = reader.next(timeout: timeout) else {
            throw BenchFailure("control socket: no reply (closed, or none within \(timeout) s) to \(line.prefix(120))")
        }
        return reply
    }

    /// Calls `method`; its result, or a failure with the agent's error.
    func call(_ method: String, _ params: JSON? = nil, timeout: Double) throws -> JSON {
        var request: JSON = ["jsonrpc": "2.0", "id": .int(nextID), "method": .string(method)]
        nextID += 1
        if let params, case .object(var object) = request {
            object["params"] = params
            request = .object(object)
        }
        let reply = try roundTrip(request.serialized(), timeout: timeout)
        let parsed: JSON
        do {
            parsed = try JSON(parsing: reply, options: JSONParseOptions(maxInputBytes: 256 << 20))
        } catch {
            throw BenchFailure("\(method): unreadable reply (\(error))")
        }
        if let error = parsed.objectValue?["error"] { throw BenchFailure("\(method) failed: \(error)") }
        return parsed.objectValue?["result"] ?? .null
    }
}
