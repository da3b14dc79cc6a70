import CLinux
import Glibc

/// Thin wrappers over the socket calls the control server and its tests use.
public enum UnixSocket {
    /// Fills a `sockaddr_un` for `path` and calls `body` with it and its length.
    /// A path starting with "@" names an abstract socket (Linux).
    static func withAddress<T>(
        _ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T
    ) throws(SystemError) -> T {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            throw SystemError("socket path \(path) (longer than \(capacity - 1) bytes)", errno: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
        }
        let length = MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(length)) }
        }
    }

    /// Connects a blocking stream socket to `path`.
    public static func connect(to path: String) throws(SystemError) -> Int32 {
        let fd = try retryingEINTR("socket") {
            socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        let result = try withAddress(path) { Glibc.connect(fd, $0, $1) }
        if result != 0 {
            let error = SystemError.current("connect \(path)")
            close(fd)
            throw error
        }
        return fd
    }

    /// Sets O_NONBLOCK on `fd`.
    static func setNonBlocking(_ fd: Int32) {
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
    }

    /// The peer's credentials (SO_PEERCRED).
    static func peerCredentials(_ fd: Int32) -> clinux_peer_credentials? {
        var credentials = clinux_peer_credentials()
        var length = socklen_t(MemoryLayout<clinux_peer_credentials>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else { return nil }
        return credentials
    }

    /// The peer's supplementary groups as they were when it connected
    /// (SO_PEERGROUPS, Linux 4.13); empty if the kernel cannot tell.
    static func peerGroups(_ fd: Int32) -> [UInt32] {
        var groups = [gid_t](repeating: 0, count: 64)
        while true {
            var length = socklen_t(groups.count * MemoryLayout<gid_t>.size)
            let status = groups.withUnsafeMutableBytes {
                getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, $0.baseAddress, &length)
            }
            let count = Int(length) / MemoryLayout<gid_t>.size
            if status == 0 { return groups.prefix(count).map { UInt32($0) } }
            guard errno == ERANGE, count > groups.count else { return [] }
            groups = [gid_t](repeating: 0, count: count)
        }
    }

    /// Writes as much of `bytes` as the socket takes now; the count written,
    /// 0 if it would block, `nil` if the peer is gone.
    static func writeSome(_ fd: Int32, _ bytes: ArraySlice<UInt8>) -> Int? {
        while true {
            let written = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written >= 0 { return written }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return 0
            default: return nil
            }
        }
    }
}
