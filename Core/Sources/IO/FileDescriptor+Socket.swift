internal import CLinux

#if canImport(Glibc)
    import Glibc
#endif

/// The identity of a Unix-socket peer (`SO_PEERCRED`).
public struct PeerCredentials: Hashable, Sendable {
    /// The peer's process id when it connected.
    public var pid: Int32
    /// Its effective user id.
    public var uid: UInt32
    /// Its effective group id.
    public var gid: UInt32
}

extension FileDescriptor {
    /// What a non-blocking send or receive achieved.
    public enum Transfer: Equatable, Sendable {
        /// This many bytes moved (0 from a receive: the peer closed its end).
        case done(Int)
        /// The socket would block (`EAGAIN`).
        case wouldBlock
    }

    /// `send(2)` with `MSG_NOSIGNAL` (and `MSG_DONTWAIT`): a gone peer is `EPIPE`, never `SIGPIPE`.
    public func send(_ bytes: UnsafeRawBufferPointer) throws(SystemError) -> Transfer {
        try Self.transfer("send") {
            Glibc.send(rawValue, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
        }
    }

    /// `recv(2)` with `MSG_DONTWAIT`; `.done(0)` is the end of the stream.
    public func receive(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Transfer {
        try Self.transfer("recv") { recv(rawValue, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT)) }
    }

    /// Runs a non-blocking `call` again after EINTR: its count, `.wouldBlock` for EAGAIN, else the error.
    private static func transfer(_ operation: String, _ call: () -> Int) throws(SystemError) -> Transfer {
        while true {
            let count = call()
            if count >= 0 { return .done(count) }
            let code = Errno.current
            switch code {
            case .interrupted: continue
            case .wouldBlock: return .wouldBlock
            default: throw SystemError(operation, errno: code)
            }
        }
    }

    /// Accepts a connection on a listening socket: the new socket (close-on-exec, non-blocking), or `nil` when none
    /// is waiting.
    public func accept() throws(SystemError) -> FileDescriptor? {
        while true {
            let fd = clinux_accept(rawValue)
            if fd >= 0 { return FileDescriptor(rawValue: fd) }
            let code = Errno.current
            switch code {
            case .interrupted, .connectionAborted: continue
            case .wouldBlock: return nil
            default: throw SystemError("accept", errno: code)
            }
        }
    }

    /// The connected peer's credentials (`SO_PEERCRED`).
    public func peerCredentials() throws(SystemError) -> PeerCredentials {
        var credentials = clinux_peer_credentials()
        var length = socklen_t(MemoryLayout<clinux_peer_credentials>.size)
        try systemCall("getsockopt SO_PEERCRED") {
            getsockopt(rawValue, SOL_SOCKET, SO_PEERCRED, &credentials, &length)
        }
        return PeerCredentials(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid)
    }

    /// The connected peer's supplementary groups as they were when it connected (`SO_PEERGROUPS`, Linux 4.13);
    /// empty if the kernel cannot tell.
    public func peerGroups() -> [UInt32] {
        var groups = [gid_t](repeating: 0, count: 64)
        while true {
            var length = socklen_t(groups.count * MemoryLayout<gid_t>.size)
            let status = groups.withUnsafeMutableBytes {
                getsockopt(rawValue, SOL_SOCKET, SO_PEERGROUPS, $0.baseAddress, &length)
            }
            let count = Int(length) / MemoryLayout<gid_t>.size
            if status == 0 { return groups.prefix(count).map { UInt32($0) } }
            guard errno == ERANGE, count > groups.count else { return [] }
            groups = [gid_t](repeating: 0, count: count)
        }
    }

    /// A connected pair of Unix sockets of `type` (`SOCK_STREAM`, `SOCK_SEQPACKET`, ...), both close-on-exec.
    public static func socketPair(type: Int32) throws(SystemError) -> (FileDescriptor, FileDescriptor) {
        var fds: [Int32] = [-1, -1]
        try systemCall("socketpair") { socketpair(AF_UNIX, type | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) }
        return (FileDescriptor(rawValue: fds[0]), FileDescriptor(rawValue: fds[1]))
    }
}

extension UnixSocket {
    /// `SOCK_CLOEXEC` and `SOCK_STREAM`, named in a file that imports CLinux (whose shim includes
    /// `<sys/socket.h>`): the whole-module (release) build of this module does not find them through Glibc
    /// alone in a file that does not import CLinux.
    static let closeOnExec = Int32(SOCK_CLOEXEC.rawValue)
    static let stream = Int32(SOCK_STREAM.rawValue)
}
