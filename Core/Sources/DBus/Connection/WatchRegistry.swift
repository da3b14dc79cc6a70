import Glibc
import Synchronization

/// The file descriptors and timers libdbus asks the owner thread to watch.
///
/// libdbus calls the add/remove/toggle hooks with its connection lock held, usually on the owner thread but
/// possibly on another one (when a released message lets reading resume), so the state is behind a `Mutex` and a
/// change made on a foreign thread wakes the owner. Handles are the libdbus pointers' bit patterns; only the owner
/// thread turns them back into pointers, and it re-checks a watch is still registered right before handling it.
final class WatchRegistry: Sendable {
    struct Watch {
        var fd: Int32
        var flags: UInt32
        var enabled: Bool
    }

    struct Timer {
        var interval: Duration
        var enabled: Bool
        var due: ContinuousClock.Instant
    }

    private struct State {
        var watches: [UInt: Watch] = [:]
        var timers: [UInt: Timer] = [:]
    }

    private let state = Mutex(State())
    private let waker: Waker
    private let ownerThread = Atomic<UInt>(0)

    init(waker: Waker) {
        self.waker = waker
    }

    /// Records the calling thread as the owner (foreign-thread changes wake it).
    func adoptCurrentThread() { ownerThread.store(UInt(pthread_self()), ordering: .releasing) }

    private func wakeIfForeign() {
        if ownerThread.load(ordering: .acquiring) != UInt(pthread_self()) { waker.wake() }
    }

    func wakeOwner() { waker.wake() }

    // MARK: libdbus hooks

    func setWatch(_ handle: UInt, _ watch: Watch) {
        state.withLock { $0.watches[handle] = watch }
        wakeIfForeign()
    }

    func removeWatch(_ handle: UInt) {
        state.withLock { _ = $0.watches.removeValue(forKey: handle) }
        wakeIfForeign()
    }

    func setTimer(_ handle: UInt, intervalMilliseconds: Int32, enabled: Bool) {
        let interval = Duration.milliseconds(max(0, Int(intervalMilliseconds)))
        let timer = Timer(interval: interval, enabled: enabled, due: .now.advanced(by: interval))
        state.withLock { $0.timers[handle] = timer }
        wakeIfForeign()
    }

    func removeTimer(_ handle: UInt) {
        state.withLock { _ = $0.timers.removeValue(forKey: handle) }
        wakeIfForeign()
    }

    // MARK: Owner thread

    /// Fills `fds` with the wake-up pipe followed by every enabled watch; `handles[i]` is the watch of `fds[i + 1]`.
    func pollSet(wakeFD: Int32, into fds: inout [pollfd], handles: inout [UInt]) {
        fds.removeAll(keepingCapacity: true)
        handles.removeAll(keepingCapacity: true)
        fds.append(pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0))
        state.withLock { state in
            for (handle, watch) in state.watches where watch.enabled {
                var events: Int16 = 0
                if watch.flags & LibDBus.watchReadable != 0 { events |= Int16(POLLIN) }
                if watch.flags & LibDBus.watchWritable != 0 { events |= Int16(POLLOUT) }
                fds.append(pollfd(fd: watch.fd, events: events, revents: 0))
                handles.append(handle)
            }
        }
    }

    /// Whether `handle` is still a live, enabled watch.
    func isLive(_ handle: UInt) -> Bool { state.withLock { $0.watches[handle]?.enabled ?? false } }

    /// The earliest due time of an enabled timer.
    var nextTimerDue: ContinuousClock.Instant? {
        state.withLock { state in state.timers.values.filter(\.enabled).map(\.due).min() }
    }

    /// The enabled timers due at `now`, re-armed for their next period.
    func takeDueTimers(now: ContinuousClock.Instant) -> [UInt] {
        state.withLock { state in
            var due: [UInt] = []
            for (handle, timer) in state.timers where timer.enabled && timer.due <= now {
                due.append(handle)
                state.timers[handle]?.due = now.advanced(by: timer.interval)
            }
            return due
        }
    }

    /// Whether `handle` is still a registered timer.
    func isTimerLive(_ handle: UInt) -> Bool { state.withLock { $0.timers[handle]?.enabled ?? false } }
}
