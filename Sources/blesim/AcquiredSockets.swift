import IO
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The sockets of AcquireNotify and AcquireWrite, as bluetoothd hands them out: a
/// SOCK_SEQPACKET socketpair per acquisition, the client gets one end, blesim keeps the other.
/// blesim's ends are read on the process's shared ``EventLoop`` (packets of AcquireWrite, and
/// the client closing its end, which releases the acquisition); a socket read at the link's
/// pace leaves the loop between two packets and comes back on a timer.
final class AcquiredSockets: Sendable {
    /// Which acquisition a socket serves.
    enum Kind: String, Sendable {
        case notify, write
    }

    private let sockets = Mutex<[String: Int32]>([:])
    private let loop: EventLoop

    init(loop: EventLoop = .shared) {
        self.loop = loop
    }

    private static func key(_ kind: Kind, _ path: String) -> String { kind.rawValue + ":" + path }

    /// What the reader of a socket does after a packet.
    enum AfterPacket: Sendable, Equatable {
        /// Reads the next packet when there is one.
        case readOn
        /// Leaves the next packet unread for this many seconds (the link's pace).
        case pause(seconds: Double)
        /// Leaves the socket unread until the `resume` that ``open(_:path:smallBuffer:onPacket:onClose:)``
        /// returned is called.
        case hold
    }

    /// A new socketpair for `path`: returns the client's end, and what resumes reading blesim's end after an
    /// ``AfterPacket/hold``. `onPacket` gets each packet (for AcquireWrite) and says what the reader does next;
    /// `onClose` runs once the socket is closed by either side. `smallBuffer` gives the client's
    /// end the smallest send buffer the kernel allows (a few packets, as an L2CAP channel has
    /// few credits), so a client writing faster than blesim reads sees EAGAIN. Nil when the
    /// system refuses a socket.
    func open(
        _ kind: Kind, path: String, smallBuffer: Bool = false,
        onPacket: @escaping @Sendable ([UInt8]) -> AfterPacket, onClose: @escaping @Sendable () -> Void
    ) -> (fd: Int32, resume: @Sendable () -> Void)? {
        guard let (ours, theirs) = try? FileDescriptor.socketPair(type: Int32(SOCK_SEQPACKET.rawValue)) else {
            return nil
        }
        if smallBuffer {
            // The kernel raises a request this small to its minimum, SOCK_MIN_SNDBUF (about 4.5 KiB).
            var size: Int32 = 1
            _ = setsockopt(theirs.rawValue, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        let key = Self.key(kind, path)
        sockets.withLock { $0[key] = ours.rawValue }
        let reader = follow(ours, key: key, onPacket: onPacket, onClose: onClose)
        return (theirs.rawValue, { reader.start() })
    }

    /// Follows a socket an application handed out (its AcquireNotify / AcquireWrite reply), under
    /// `key`: `onPacket` gets each packet, `onClose` runs once it is closed by either side.
    func adopt(
        _ fd: Int32, key: String, onPacket: @escaping @Sendable ([UInt8]) -> Void,
        onClose: @escaping @Sendable () -> Void
    ) {
        sockets.withLock { $0[key] = fd }
        follow(
            FileDescriptor(rawValue: fd), key: key,
            onPacket: {
                onPacket($0)
                return .readOn
            }, onClose: onClose)
    }

    @discardableResult
    private func follow(
        _ fd: FileDescriptor, key: String, onPacket: @escaping @Sendable ([UInt8]) -> AfterPacket,
        onClose: @escaping @Sendable () -> Void
    ) -> SocketReader {
        // The acquisition is released before the socket leaves the table: until then a subscription
        // made meanwhile finds the socket hung up (``peerClosed(_:path:)``) and releases it itself,
        // so it never sees the socket gone while the world still holds the acquisition.
        let reader = SocketReader(fd: fd, loop: loop, onPacket: onPacket) { [self] in
            onClose()
            sockets.withLock { table in
                if table[key] == fd.rawValue { table[key] = nil }
            }
            fd.close()
        }
        reader.start()
        return reader
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

/// Reads one socket on an ``EventLoop`` until end of file, leaving the loop after a packet for
/// as long as `onPacket` says and coming back on a timer, or when ``start()`` is called again after a hold (so a
/// hang-up waits for the packets before it, read at their pace).
private final class SocketReader: Sendable {
    let fd: FileDescriptor
    let loop: EventLoop
    let onPacket: @Sendable ([UInt8]) -> AcquiredSockets.AfterPacket
    let onEnd: @Sendable () -> Void
    private let registration = Mutex<EventLoop.Registration?>(nil)
    /// Set once the socket ended (on the loop's thread): a later ``start()`` does nothing.
    private let ended = Mutex(false)

    /// The most packets read per readiness, so one socket cannot hold the loop.
    private static let budget = 32

    init(
        fd: FileDescriptor, loop: EventLoop, onPacket: @escaping @Sendable ([UInt8]) -> AcquiredSockets.AfterPacket,
        onEnd: @escaping @Sendable () -> Void
    ) {
        self.fd = fd
        self.loop = loop
        self.onPacket = onPacket
        self.onEnd = onEnd
    }

    /// Starts (or, after a pause, resumes) reading; the loop keeps the reader alive meanwhile. The
    /// registration is made on the loop's thread, so the reader cannot reach the end of file (and
    /// close the socket) before it knows its registration to remove first.
    func start() {
        guard loop.isCurrent else {
            loop.execute { self.start() }
            return
        }
        guard !ended.withLock({ $0 }), registration.withLock({ $0 == nil }) else { return }
        do {
            try fd.setNonBlocking()
            let watched = try loop.register(fd, interest: .readable) { _ in self.readAvailable() }
            registration.withLock { $0 = watched }
        } catch {
            end()
        }
    }

    private func readAvailable() {
        var buffer = [UInt8](repeating: 0, count: 1024)
        for _ in 0..<Self.budget {
            let count = buffer.withUnsafeMutableBytes {
                recv(fd.rawValue, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
            }
            if count < 0, errno == EAGAIN || errno == EINTR { return }
            guard count > 0 else {
                stopWatching()
                end()
                return
            }
            switch onPacket(Array(buffer[0..<count])) {
            case .readOn:
                continue
            case .pause(let wait):
                stopWatching()
                loop.schedule(after: .milliseconds(Int64(min(wait, 10) * 1000))) { self.start() }
                return
            case .hold:
                stopWatching()
                return
            }
        }
    }

    private func end() {
        ended.withLock { $0 = true }
        onEnd()
    }

    private func stopWatching() {
        if let watched = registration.withLock({ state in
            defer { state = nil }; return state
        }) {
            loop.deregister(watched)
        }
    }
}
