import Glibc
import IO

/// Sends sd_notify(3) messages to the socket named by `NOTIFY_SOCKET`: a
/// datagram Unix socket, abstract if the name starts with "@".
public struct SystemdNotifier: Sendable {
    /// The socket path (or "@name" for an abstract socket).
    public let socketPath: String

    /// A notifier for `NOTIFY_SOCKET` in `environment`; `nil` if unset or empty.
    public init?(environment: [String: String]) {
        guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty else { return nil }
        socketPath = path
    }

    /// A notifier for an explicit socket path.
    public init(socketPath: String) {
        self.socketPath = socketPath
    }

    /// Sends `message` (newline-separated `KEY=value` assignments).
    public func send(_ message: String) throws(SystemError) {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .current("socket") }
        defer { close(fd) }
        let bytes = Array(message.utf8)
        let sent = try UnixSocket.withAddress(socketPath) { address, length in
            bytes.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), address, length) }
        }
        guard sent >= 0 else { throw .current("sendto \(socketPath)") }
    }

    /// `READY=1` with a status line.
    public func ready(status: String) throws(SystemError) {
        try send("READY=1\nSTATUS=\(status)")
    }

    /// `RELOADING=1` with `MONOTONIC_USEC`, as Type=notify-reload (systemd
    /// 253+) requires; older systemd (Debian 12 has 252) accepts and ignores
    /// the extra field.
    public func reloading() throws(SystemError) {
        try send("RELOADING=1\nMONOTONIC_USEC=\(Self.monotonicMicroseconds())")
    }

    /// `STOPPING=1`.
    public func stopping() throws(SystemError) {
        try send("STOPPING=1")
    }

    /// CLOCK_MONOTONIC in microseconds.
    public static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    }
}

/// The process environment as a dictionary.
public enum ProcessEnvironment {
    /// Every `NAME=value` of `environ`.
    public static func current() -> [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        return result
    }
}
