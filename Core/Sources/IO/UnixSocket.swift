#if canImport(Glibc)
    import Glibc
#endif

/// Unix-domain socket addresses and the calls that take one.
public enum UnixSocket {
    /// Fills a `sockaddr_un` for `path` and calls `body` with it and its length. A path starting with "@" names an
    /// abstract socket (Linux).
    /// - Throws: `ENAMETOOLONG` when `path` does not fit.
    public static func withAddress<T>(
        _ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T
    ) throws(SystemError) -> T {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            throw SystemError(
                "socket", path: path, errno: .nameTooLong, detail: "longer than \(capacity - 1) bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(length)) }
        }
    }

    /// A new close-on-exec socket of `type` (`SOCK_STREAM`, `SOCK_DGRAM`, ...; add `SOCK_NONBLOCK` as needed).
    public static func make(type: Int32) throws(SystemError) -> FileDescriptor {
        FileDescriptor(rawValue: try systemCall("socket") { socket(AF_UNIX, type | closeOnExec, 0) })
    }

    /// A blocking stream socket connected to `path` (a client's; the agent's own sockets never block).
    public static func connect(to path: String) throws(SystemError) -> FileDescriptor {
        let fd = try make(type: stream)
        do throws(SystemError) {
            let connected = try withAddress(path) { Glibc.connect(fd.rawValue, $0, $1) }
            if connected != 0 { throw SystemError.current("connect", path: path) }
        } catch {
            fd.close()
            throw error
        }
        return fd
    }

    /// Binds `fd` to `path`.
    public static func bind(_ fd: FileDescriptor, to path: String) throws(SystemError) {
        let bound = try withAddress(path) { Glibc.bind(fd.rawValue, $0, $1) }
        if bound != 0 { throw SystemError.current("bind", path: path) }
    }
}
