import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The sockets of AcquireNotify and AcquireWrite, as bluetoothd hands them out: a
/// SOCK_SEQPACKET socketpair per acquisition, the client gets one end, blesim keeps the other.
/// A thread per socket waits for packets (AcquireWrite) and for the client closing its end,
/// which releases the acquisition.
final class AcquiredSockets: Sendable {
    /// Which acquisition a socket serves.
    enum Kind: String, Sendable {
        case notify, write
    }

    private let sockets = Mutex<[String: Int32]>([:])

    private static func key(_ kind: Kind, _ path: String) -> String { kind.rawValue + ":" + path }

    /// A new socketpair for `path`: returns the client's end. `onPacket` gets each packet (for
    /// AcquireWrite) and says how many seconds the next one stays unread (the link's pace);
    /// `onClose` runs once the socket is closed by either side. `smallBuffer` gives the client's
    /// end the smallest send buffer the kernel allows (a few packets, as an L2CAP channel has
    /// few credits), so a client writing faster than blesim reads sees EAGAIN. Nil when the
    /// system refuses a socket.
    func open(
        _ kind: Kind, path: String, smallBuffer: Bool = false, onPacket: @escaping @Sendable ([UInt8]) -> Double,
        onClose: @escaping @Sendable () -> Void
    ) -> Int32? {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            return nil
        }
        let ours = pair[0]
        if smallBuffer {
            // The kernel raises a request this small to its minimum, SOCK_MIN_SNDBUF (about 4.5 KiB).
            var size: Int32 = 1
            _ = setsockopt(pair[1], SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        sockets.withLock { $0[Self.key(kind, path)] = ours }
        let reader = Reader(fd: ours, onPacket: onPacket) { [self] in
            sockets.withLock { table in
                if table[Self.key(kind, path)] == ours { table[Self.key(kind, path)] = nil }
            }
            Glibc.close(ours)
            onClose()
        }
        reader.start()
        return pair[1]
    }

    /// Follows a socket an application handed out (its AcquireNotify / AcquireWrite reply), under
    /// `key`: `onPacket` gets each packet, `onClose` runs once it is closed by either side.
    func adopt(
        _ fd: Int32, key: String, onPacket: @escaping @Sendable ([UInt8]) -> Void,
        onClose: @escaping @Sendable () -> Void
    ) {
        sockets.withLock { $0[key] = fd }
        let reader = Reader(
            fd: fd,
            onPacket: {
                onPacket($0)
                return 0
            }
        ) { [self] in
            sockets.withLock { table in
                if table[key] == fd { table[key] = nil }
            }
            Glibc.close(fd)
            onClose()
        }
        reader.start()
    }

    /// Whether a socket is open under `key`.
    func contains(key: String) -> Bool { sockets.withLock { $0[key] != nil } }

    /// Sends `value` as one packet on the socket under `key` (as bluetoothd's `sock_io_send`);
    /// false when there is none or the send failed.
    func send(_ value: [UInt8], key: String) -> Bool {
        sockets.withLock { table in
            guard let fd = table[key] else { return false }
            let sent = value.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            return sent >= 0
        }
    }

    /// Shuts the socket under `key` down (the other side sees end of file; `onClose` follows).
    func shut(key: String) {
        sockets.withLock { table in
            if let fd = table[key] { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    /// Whether the client has already closed its end of the `kind` socket of `path` (its reader
    /// may not have seen the end of file yet).
    func peerClosed(_ kind: Kind, path: String) -> Bool {
        sockets.withLock { table in
            guard let fd = table[Self.key(kind, path)] else { return false }
            var poller = pollfd(fd: fd, events: 0, revents: 0)
            return poll(&poller, 1, 0) == 1 && poller.revents & Int16(POLLHUP) != 0
        }
    }

    /// Sends `value` as one packet on the notify socket of `path`, if there is one (a full or
    /// gone socket drops it, as a congested link would).
    func send(_ value: [UInt8], path: String) {
        sockets.withLock { table in
            guard let fd = table[Self.key(.notify, path)] else { return }
            _ = value.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL))
            }
        }
    }

    /// Closes blesim's end of the `kind` socket of `path` (the client sees end of file).
    func close(_ kind: Kind, path: String) {
        sockets.withLock { table in
            if let fd = table[Self.key(kind, path)] { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }
}

/// A thread that reads one socket until end of file, waiting after each packet as long as
/// `onPacket` says.
private final class Reader: Sendable {
    let fd: Int32
    let onPacket: @Sendable ([UInt8]) -> Double
    let onEnd: @Sendable () -> Void

    init(fd: Int32, onPacket: @escaping @Sendable ([UInt8]) -> Double, onEnd: @escaping @Sendable () -> Void) {
        self.fd = fd
        self.onPacket = onPacket
        self.onEnd = onEnd
    }

    func start() {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let started = pthread_create(
            &thread, nil,
            { raw in
                guard let raw else { return nil }
                let reader = Unmanaged<Reader>.fromOpaque(raw).takeRetainedValue()
                reader.run()
                return nil
            }, context)
        if started == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<Reader>.fromOpaque(context).release()
            onEnd()
        }
    }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                let wait = onPacket(Array(buffer[0..<count]))
                if wait > 0 { usleep(useconds_t(min(wait, 10) * 1_000_000)) }
            } else if count < 0, errno == EINTR {
                continue
            } else {
                break
            }
        }
        onEnd()
    }
}
