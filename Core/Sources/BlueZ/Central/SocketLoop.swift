import IO
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The central backend's sockets of BlueZ's fd fast paths, on an ``EventLoop`` (the process's shared one): the
/// SOCK_SEQPACKET sockets of AcquireNotify (read: one packet is one value) and AcquireWrite (written by callers;
/// watched for hang-up and, when full, for room again).
///
/// Sockets are non-blocking; reads use a buffer of the socket's MTU (at least 512 bytes, the longest attribute
/// value), at most 64 packets per readiness so one busy socket cannot hold the loop, and none while the reader is
/// paused (its queue is full: what arrives waits in the socket). End of file or a hang-up means
/// the link (or bluetoothd) is gone: the socket is closed and reported. Sockets are closed on the loop's thread
/// only, after their registration is gone, so a number is never reused while it is watched.
final class SocketLoop: Sendable {
    /// What happened to a socket.
    enum Event: Sendable {
        /// A packet arrived on a reading socket.
        case packet(path: String, value: [UInt8])
        /// The socket `fd` hung up (or was removed) and is closed now.
        case closed(path: String, fd: Int32)
        /// The packets read in one turn of the loop have all been reported.
        case batchEnded
    }

    /// The result of a non-blocking send.
    enum SendResult: Sendable, Equatable {
        /// Sent whole.
        case sent
        /// The socket buffer is full (EAGAIN).
        case full
        /// The socket is gone.
        case closed
    }

    private struct Watch {
        var path: String
        var reads: Bool
        var paused = false
        var bufferSize: Int
        var registration: EventLoop.Registration?
        var closing = false
        var writeWaiters: [CheckedContinuation<Bool, Never>] = []
    }

    private struct State {
        var watches: [Int32: Watch] = [:]
        var stopped = false
    }

    /// The most packets read from one socket per readiness.
    private static let readBatch = 64

    private let state = Mutex(State())
    private let loop: EventLoop
    private let handler: @Sendable (Event) -> Void

    /// Sockets on `loop`; `handler` is called on its thread for every event.
    init(loop: EventLoop = .shared, handler: @escaping @Sendable (Event) -> Void) {
        self.loop = loop
        self.handler = handler
    }

    /// Registers `fd` (now owned by the loop) for `path`; `reads` for an
    /// AcquireNotify socket. Returns false (and closes `fd`) once stopped.
    @discardableResult
    func add(fd: Int32, path: String, reads: Bool, mtu: Int) -> Bool {
        let socket = FileDescriptor(rawValue: fd)
        try? socket.setNonBlocking()
        let added = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.watches[fd] = Watch(path: path, reads: reads, bufferSize: max(mtu, 512))
            return true
        }
        guard added else {
            socket.close()
            return false
        }
        do {
            let registration = try loop.register(socket, interest: reads ? .readable : []) { [weak self] readiness in
                self?.handle(fd: fd, readiness)
            }
            let keep = state.withLock { state -> Bool in
                guard state.watches[fd] != nil else { return false }
                state.watches[fd]?.registration = registration
                return true
            }
            if !keep { loop.deregister(registration) }
        } catch {
            remove(fd: fd)
            return false
        }
        return true
    }

    /// Stops (true) or resumes (false) reading `fd`; what arrives meanwhile waits in the socket.
    func setPaused(_ paused: Bool, fd: Int32) {
        state.withLock { state in
            guard let watch = state.watches[fd], watch.paused != paused else { return }
            state.watches[fd]?.paused = paused
            if let registration = watch.registration, let changed = state.watches[fd] {
                loop.setInterest(Self.interest(of: changed), for: registration)
            }
        }
    }

    /// What `watch` waits for: packets unless paused (or write-only), room while a writer waits.
    private static func interest(of watch: Watch) -> EventLoop.Interest {
        var interest: EventLoop.Interest = watch.reads && !watch.paused ? .readable : []
        if !watch.writeWaiters.isEmpty { interest.insert(.writable) }
        return interest
    }

    /// Closes the socket registered as `fd` (on the loop's thread).
    func remove(fd: Int32) {
        state.withLock { state in state.watches[fd]?.closing = true }
        loop.execute { [self] in close(fd) }
    }

    /// Sends `value` as one packet without blocking.
    func send(_ value: [UInt8], fd: Int32) -> SendResult {
        let result = state.withLock { state -> SendResult in
            guard let watch = state.watches[fd], !watch.closing else { return .closed }
            let sent = value.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
            }
            if sent == value.count { return .sent }
            if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) { return .full }
            state.watches[fd]?.closing = true
            return .closed
        }
        if result == .closed { loop.execute { [self] in close(fd) } }
        return result
    }

    /// Waits until `fd` can be written again: true, or false if it closed.
    func waitWritable(fd: Int32) async -> Bool {
        await withCheckedContinuation { continuation in
            let waiting = state.withLock { state -> Bool in
                guard let watch = state.watches[fd], !watch.closing else { return false }
                state.watches[fd]?.writeWaiters.append(continuation)
                // Under the lock: the handler resets the interest under it too, so no wake-up is lost between.
                if let registration = watch.registration, let waiting = state.watches[fd] {
                    loop.setInterest(Self.interest(of: waiting), for: registration)
                }
                return true
            }
            if !waiting { continuation.resume(returning: false) }
        }
    }

    /// Closes every socket.
    func stop() {
        let fds = state.withLock { state -> [Int32] in
            state.stopped = true
            for fd in state.watches.keys { state.watches[fd]?.closing = true }
            return Array(state.watches.keys)
        }
        loop.execute { [self] in fds.forEach(close) }
    }

    private func close(_ fd: Int32) {
        guard let watch = state.withLock({ $0.watches.removeValue(forKey: fd) }) else { return }
        if let registration = watch.registration { loop.deregister(registration) }
        FileDescriptor(rawValue: fd).close()
        watch.writeWaiters.forEach { $0.resume(returning: false) }
        handler(.closed(path: watch.path, fd: fd))
    }

    private func handle(fd: Int32, _ readiness: EventLoop.Readiness) {
        guard let watch = state.withLock({ $0.watches[fd] }), !watch.closing else { return }
        // Packets still queued are read before a hang-up closes the socket, paused or not (a hang-up is reported
        // whatever the interest, so a paused socket that hung up would otherwise wake the loop for ever).
        let hungUp = !readiness.isDisjoint(with: [.hangUp, .error])
        var drained = true
        if watch.reads && (hungUp || (readiness.contains(.readable) && !watch.paused)) {
            drained = false
            var buffer = [UInt8](repeating: 0, count: watch.bufferSize)
            var read = 0
            defer { if read > 0 { handler(.batchEnded) } }
            // Up to a batch of packets per readiness (one wake-up for many values under a flood), until the socket
            // is empty or reading is paused.
            for _ in 0..<Self.readBatch {
                let count = buffer.withUnsafeMutableBytes {
                    Glibc.recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
                }
                if count > 0 {
                    read += 1
                    handler(.packet(path: watch.path, value: Array(buffer[0..<count])))
                    if !hungUp && state.withLock({ $0.watches[fd]?.paused ?? true }) { return }
                    continue
                }
                if count < 0 && (errno == EAGAIN || errno == EINTR) {
                    drained = true
                    break
                }
                close(fd)
                return
            }
        }
        if readiness.contains(.writable) {
            let waiters = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
                let waiters = state.watches[fd]?.writeWaiters ?? []
                state.watches[fd]?.writeWaiters = []
                if let registration = watch.registration, let served = state.watches[fd] {
                    loop.setInterest(Self.interest(of: served), for: registration)
                }
                return waiters
            }
            waiters.forEach { $0.resume(returning: true) }
        }
        if drained && hungUp { close(fd) }
    }
}
