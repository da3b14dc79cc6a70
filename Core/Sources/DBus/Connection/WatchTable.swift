import IO
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// libdbus's watches and timeouts as registrations and timers of the owner's ``EventLoop``.
///
/// libdbus may keep two watches on one descriptor (reading and writing); the descriptor is registered once, with the
/// union of its enabled watches' flags, and deregistered while none is enabled. libdbus calls the add, remove and
/// toggle hooks with its connection lock held, usually on the owner thread but possibly on another one (a message
/// released there lets reading resume), so the table is behind a `Mutex` and the loop's calls are thread-safe.
/// Handles are the libdbus pointers' bit patterns; only the owner thread turns them back into pointers, and it
/// re-checks that a watch or timeout is still live right before handing it to libdbus.
///
/// Once the connection is open its socket is read by the connection's own reader (``takeOverReading(fd:_:)``):
/// readiness to read goes to it, and libdbus, which then only writes, sees only readiness to write.
final class WatchTable: Sendable {
    struct Watch {
        var fd: Int32
        var flags: UInt32
        var enabled: Bool
    }

    private struct Timeout {
        var interval: Duration
        var enabled: Bool
        var timer: EventLoop.Timer?
    }

    private struct State {
        var watches: [UInt: Watch] = [:]
        var registrations: [Int32: EventLoop.Registration] = [:]
        var timeouts: [UInt: Timeout] = [:]
        var reader: Reader?
        var closed = false
    }

    private struct Reader {
        let fd: Int32
        let read: @Sendable () -> Void
    }

    private let loop: EventLoop
    private let state = Mutex(State())
    /// Runs on the owner thread after libdbus handled a watch or a timeout (dispatch what was read, check teardown).
    private let afterIO: @Sendable () -> Void

    init(loop: EventLoop, afterIO: @escaping @Sendable () -> Void) {
        self.loop = loop
        self.afterIO = afterIO
    }

    // MARK: libdbus hooks

    func setWatch(_ handle: UInt, _ watch: Watch) {
        state.withLock { state in
            let previous = state.watches[handle]?.fd
            state.watches[handle] = watch
            if let previous, previous != watch.fd { sync(previous, &state) }
            sync(watch.fd, &state)
        }
    }

    func removeWatch(_ handle: UInt) {
        state.withLock { state in
            guard let watch = state.watches.removeValue(forKey: handle) else { return }
            sync(watch.fd, &state)
        }
    }

    func setTimeout(_ handle: UInt, intervalMilliseconds: Int32, enabled: Bool) {
        let interval = Duration.milliseconds(max(0, Int(intervalMilliseconds)))
        state.withLock { state in
            if let timer = state.timeouts[handle]?.timer { loop.cancel(timer) }
            var timeout = Timeout(interval: interval, enabled: enabled, timer: nil)
            if enabled && !state.closed {
                timeout.timer = loop.schedule(after: interval) { [weak self] in self?.fire(handle) }
            }
            state.timeouts[handle] = timeout
        }
    }

    func removeTimeout(_ handle: UInt) {
        state.withLock { state in
            if let timer = state.timeouts.removeValue(forKey: handle)?.timer { loop.cancel(timer) }
        }
    }

    /// From now on `read` runs on the owner thread whenever socket `fd` has something to read (or has hung up),
    /// and libdbus's watches on it get only readiness to write.
    func takeOverReading(fd: Int32, _ read: @escaping @Sendable () -> Void) {
        state.withLock { state in
            state.reader = Reader(fd: fd, read: read)
            sync(fd, &state)
        }
    }

    /// Deregisters every descriptor and cancels every timer (owner thread, at teardown, before the connection is
    /// released); later hook calls change only the table.
    func close() {
        state.withLock { state in
            state.closed = true
            for registration in state.registrations.values { loop.deregister(registration) }
            state.registrations = [:]
            for timeout in state.timeouts.values { if let timer = timeout.timer { loop.cancel(timer) } }
        }
    }

    /// Registers, re-arms or deregisters `fd` to match its enabled watches (with the lock held).
    private func sync(_ fd: Int32, _ state: inout State) {
        var interest: EventLoop.Interest = []
        var enabled = false
        if state.reader?.fd == fd {
            enabled = true
            interest.insert(.readable)
        }
        for watch in state.watches.values where watch.fd == fd && watch.enabled {
            enabled = true
            if watch.flags & LibDBus.watchReadable != 0 { interest.insert(.readable) }
            if watch.flags & LibDBus.watchWritable != 0 { interest.insert(.writable) }
        }
        let registration = state.registrations[fd]
        if !enabled || state.closed {
            if let registration { loop.deregister(registration) }
            state.registrations[fd] = nil
        } else if let registration {
            loop.setInterest(interest, for: registration)
        } else {
            state.registrations[fd] = try? loop.register(FileDescriptor(rawValue: fd), interest: interest) {
                [weak self] readiness in self?.handle(fd, readiness)
            }
        }
    }

    // MARK: Owner thread

    private func handle(_ fd: Int32, _ readiness: EventLoop.Readiness) {
        let (targets, reader) = state.withLock { state in
            (
                state.watches.filter { $0.value.fd == fd && $0.value.enabled }.map { ($0.key, $0.value.flags) },
                state.reader?.fd == fd ? state.reader : nil
            )
        }
        for (handle, flags) in targets {
            var events: UInt32 = 0
            if flags & LibDBus.watchWritable != 0, readiness.contains(.writable) { events |= LibDBus.watchWritable }
            if reader == nil {
                if flags & LibDBus.watchReadable != 0, readiness.contains(.readable) { events |= LibDBus.watchReadable }
                if readiness.contains(.hangUp) { events |= LibDBus.watchHangup }
                if readiness.contains(.error) { events |= LibDBus.watchError }
            }
            guard events != 0, isLiveWatch(handle), let watch = LoopHooks.pointer(handle) else { continue }
            LibDBus.handleWatch(watch, events)
            guard events & LibDBus.watchReadable != 0 else { continue }
            // libdbus reads about 4 KiB per call (2 KiB a read): a few signals. While more waits in the socket, read on (a
            // bounded number of times) so that one dispatch run, and one wake-up of each consumer, covers them all.
            for _ in 1..<Self.readsPerWakeUp {
                guard Self.bytesWaiting(fd) > 0, isLiveWatch(handle) else { break }
                LibDBus.handleWatch(watch, LibDBus.watchReadable)
            }
        }
        if let reader, !readiness.isDisjoint(with: [.readable, .hangUp, .error]) { reader.read() }
        afterIO()
    }

    /// Calls into libdbus for a readable socket before its messages are dispatched: at most about 64 KiB.
    private static let readsPerWakeUp = 16

    /// The bytes waiting in socket `fd` (0 if it cannot tell).
    private static func bytesWaiting(_ fd: Int32) -> Int32 {
        var count: Int32 = 0
        return ioctl(fd, UInt(FIONREAD), &count) == 0 ? count : 0
    }

    private func isLiveWatch(_ handle: UInt) -> Bool { state.withLock { $0.watches[handle]?.enabled ?? false } }

    private func fire(_ handle: UInt) {
        let live = state.withLock { state -> Bool in
            guard !state.closed, var timeout = state.timeouts[handle], timeout.enabled else { return false }
            timeout.timer = loop.schedule(after: timeout.interval) { [weak self] in self?.fire(handle) }
            state.timeouts[handle] = timeout
            return true
        }
        guard live, let timeout = LoopHooks.pointer(handle) else { return }
        LibDBus.handleTimeout(timeout)
        afterIO()
    }
}
