import Glibc
import Synchronization

/// The central backend's one I/O thread for BlueZ's fd fast paths: the
/// SOCK_SEQPACKET sockets of AcquireNotify (read: one packet is one value)
/// and AcquireWrite (written by callers; watched for hang-up and, when full,
/// for room again).
///
/// Decision: a dedicated thread blocked in `poll(2)` on every socket plus an
/// pipe for wake-ups, instead of the D-Bus owner loop (which belongs to the
/// DBus module) or a thread per socket. Sockets are non-blocking; reads use a
/// buffer of the socket's MTU (at least 512 bytes, the longest attribute
/// value). End of file or a hang-up means the link (or bluetoothd) is gone:
/// the socket is closed and reported. Only this thread closes a registered
/// descriptor, so a number is never reused while it is being polled.
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
        var closing = false
        var writeWaiters: [CheckedContinuation<Bool, Never>] = []
    }

    private struct State {
        var watches: [Int32: Watch] = [:]
        var stopped = false
    }

    /// The most packets read from one socket in one turn.
    private static let readBatch = 64

    private let state = Mutex(State())
    private let wakeFD: Int32
    private let wakeWriteFD: Int32
    private let handler: @Sendable (Event) -> Void

    /// Starts the thread; `handler` is called on it for every event.
    init(handler: @escaping @Sendable (Event) -> Void) {
        self.handler = handler
        var pipeFDs: [Int32] = [-1, -1]
        _ = pipeFDs.withUnsafeMutableBufferPointer { pipe($0.baseAddress) }
        for fd in pipeFDs where fd >= 0 {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        wakeFD = pipeFDs[0]
        wakeWriteFD = pipeFDs[1]
        let box = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(
            &thread, nil,
            { argument in
                guard let argument else { return nil }
                Unmanaged<SocketLoop>.fromOpaque(argument).takeRetainedValue().run()
                return nil
            }, box)
        if status == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<SocketLoop>.fromOpaque(box).release()
            state.withLock { $0.stopped = true }
        }
    }

    /// Registers `fd` (now owned by the loop) for `path`; `reads` for an
    /// AcquireNotify socket. Returns false (and closes `fd`) once stopped.
    @discardableResult
    func add(fd: Int32, path: String, reads: Bool, mtu: Int) -> Bool {
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        let added = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.watches[fd] = Watch(path: path, reads: reads, bufferSize: max(mtu, 512))
            return true
        }
        if !added { _ = Glibc.close(fd) }
        wake()
        return added
    }

    /// Stops (true) or resumes (false) reading `fd`; what arrives meanwhile waits in the socket.
    func setPaused(_ paused: Bool, fd: Int32) {
        let changed = state.withLock { state -> Bool in
            guard state.watches[fd]?.paused != paused, state.watches[fd] != nil else { return false }
            state.watches[fd]?.paused = paused
            return true
        }
        if changed { wake() }
    }

    /// Closes the socket registered as `fd` (on the loop thread).
    func remove(fd: Int32) {
        state.withLock { state in state.watches[fd]?.closing = true }
        wake()
    }

    /// Sends `value` as one packet without blocking.
    func send(_ value: [UInt8], fd: Int32) -> SendResult {
        state.withLock { state -> SendResult in
            guard let watch = state.watches[fd], !watch.closing else { return .closed }
            let sent = value.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
            }
            if sent == value.count { return .sent }
            if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) { return .full }
            state.watches[fd]?.closing = true
            return .closed
        }
    }

    /// Waits until `fd` can be written again: true, or false if it closed.
    func waitWritable(fd: Int32) async -> Bool {
        await withCheckedContinuation { continuation in
            let registered = state.withLock { state -> Bool in
                guard state.watches[fd] != nil, state.watches[fd]?.closing == false else { return false }
                state.watches[fd]?.writeWaiters.append(continuation)
                return true
            }
            if registered { wake() } else { continuation.resume(returning: false) }
        }
    }

    /// Closes every socket and ends the thread.
    func stop() {
        state.withLock { state in
            state.stopped = true
            for fd in state.watches.keys { state.watches[fd]?.closing = true }
        }
        wake()
    }

    private func wake() {
        var one: UInt8 = 1
        _ = Glibc.write(wakeWriteFD, &one, 1)
    }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 512)
        while true {
            let (fds, stopped) = closeMarked()
            if stopped && fds.isEmpty { break }
            var polls = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
            for (fd, events) in fds { polls.append(pollfd(fd: fd, events: events, revents: 0)) }
            let ready = poll(&polls, nfds_t(polls.count), -1)
            if ready < 0 { continue }
            if polls[0].revents != 0 {
                var drain = [UInt8](repeating: 0, count: 64)
                while drain.withUnsafeMutableBytes({ Glibc.read(wakeFD, $0.baseAddress, 64) }) > 0 {}
            }
            for entry in polls.dropFirst() where entry.revents != 0 {
                handle(fd: entry.fd, revents: entry.revents, buffer: &buffer)
            }
            if ready > 0 { handler(.batchEnded) }
        }
        _ = Glibc.close(wakeFD)
        _ = Glibc.close(wakeWriteFD)
    }

    /// Closes sockets marked for closing; returns what to poll next.
    private func closeMarked() -> ([(Int32, Int16)], Bool) {
        var closed: [(String, Int32, [CheckedContinuation<Bool, Never>])] = []
        let result = state.withLock { state -> ([(Int32, Int16)], Bool) in
            for (fd, watch) in state.watches where watch.closing {
                _ = Glibc.close(fd)
                state.watches[fd] = nil
                closed.append((watch.path, fd, watch.writeWaiters))
            }
            let fds = state.watches.map { fd, watch -> (Int32, Int16) in
                var events: Int16 = 0
                if watch.reads && !watch.paused { events |= Int16(POLLIN) }
                if !watch.writeWaiters.isEmpty { events |= Int16(POLLOUT) }
                return (fd, events)
            }
            return (fds, state.stopped)
        }
        for (path, fd, waiters) in closed {
            waiters.forEach { $0.resume(returning: false) }
            handler(.closed(path: path, fd: fd))
        }
        return result
    }

    private func handle(fd: Int32, revents: Int16, buffer: inout [UInt8]) {
        guard let watch = state.withLock({ $0.watches[fd] }) else { return }
        if revents & Int16(POLLIN) != 0 {
            if buffer.count < watch.bufferSize { buffer = [UInt8](repeating: 0, count: watch.bufferSize) }
            // Up to a batch of packets per turn (one poll for many values under a flood), until the socket is
            // empty or reading is paused.
            for _ in 0..<SocketLoop.readBatch {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, watch.bufferSize) }
                if count > 0 {
                    handler(.packet(path: watch.path, value: Array(buffer[0..<count])))
                    if state.withLock({ $0.watches[fd]?.paused ?? true }) { return }
                    continue
                }
                if count < 0 && (errno == EAGAIN || errno == EINTR) { return }
                remove(fd: fd)
                return
            }
            return
        }
        if revents & Int16(POLLOUT) != 0 {
            let waiters = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
                let waiters = state.watches[fd]?.writeWaiters ?? []
                state.watches[fd]?.writeWaiters = []
                return waiters
            }
            waiters.forEach { $0.resume(returning: true) }
        }
        if revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 { remove(fd: fd) }
    }
}
