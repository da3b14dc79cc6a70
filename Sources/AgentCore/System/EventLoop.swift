import CLinux
import Glibc
import Synchronization

/// One thread's poll(2) loop over registered file descriptors, plus an
/// eventfd through which any thread hands it work (``execute(_:)``). Nothing
/// in it sleeps: it waits in poll until a descriptor is ready or work arrives.
/// Handlers run on the loop's thread and must not block.
public final class EventLoop: Sendable {
    /// A readiness handler; receives poll's `revents`.
    public typealias Handler = @Sendable (_ events: Int16) -> Void

    private struct Source {
        var events: Int16
        var handler: Handler
    }

    private struct State {
        var sources: [Int32: Source] = [:]
        var jobs: [@Sendable () -> Void] = []
        var stopped = false
    }

    private let wakeFD: Int32
    private let state = Mutex(State())

    /// A loop with its wake-up eventfd.
    public init() throws(SystemError) {
        wakeFD = try retryingEINTR("eventfd") { eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC)) }
    }

    deinit { close(wakeFD) }

    /// Watches `fd` for `events` (POLLIN, POLLOUT), replacing an earlier registration.
    public func register(_ fd: Int32, events: Int16, handler: @escaping Handler) {
        state.withLock { $0.sources[fd] = Source(events: events, handler: handler) }
        wake()
    }

    /// Changes the events watched on `fd`.
    public func update(_ fd: Int32, events: Int16) {
        let changed = state.withLock { state -> Bool in
            guard let current = state.sources[fd], current.events != events else { return false }
            state.sources[fd]?.events = events
            return true
        }
        if changed { wake() }
    }

    /// Stops watching `fd` (the caller closes it).
    public func unregister(_ fd: Int32) {
        _ = state.withLock { $0.sources.removeValue(forKey: fd) }
    }

    /// Runs `job` on the loop's thread, soon, in submission order.
    public func execute(_ job: @escaping @Sendable () -> Void) {
        state.withLock { $0.jobs.append(job) }
        wake()
    }

    /// Makes ``run()`` return after the current iteration.
    public func stop() {
        state.withLock { $0.stopped = true }
        wake()
    }

    private func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// Runs the loop on the calling thread until ``stop()``.
    public func run() {
        while true {
            let (stopped, snapshot) = state.withLock { ($0.stopped, $0.sources.map { ($0.key, $0.value.events) }) }
            if stopped { return }
            var fds = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
            fds += snapshot.map { pollfd(fd: $0.0, events: $0.1, revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), -1)
            if ready < 0 { continue }  // EINTR: go round
            if fds[0].revents != 0 {
                var counter: UInt64 = 0
                _ = read(wakeFD, &counter, 8)
            }
            runJobs()
            for entry in fds.dropFirst() where entry.revents != 0 {
                if entry.revents & Int16(POLLNVAL) != 0 {
                    unregister(entry.fd)  // closed without unregistering: never spin on it
                    continue
                }
                guard let handler = state.withLock({ $0.sources[entry.fd]?.handler }) else { continue }
                handler(entry.revents)
            }
        }
    }

    /// Runs the jobs queued before this call. Jobs they (or other threads) queue
    /// wait for the next iteration, after poll: a steady stream of jobs never
    /// keeps the loop from its descriptors (their wake-up makes that poll return at once).
    private func runJobs() {
        let jobs = state.withLock { state in
            defer { state.jobs = [] }
            return state.jobs
        }
        for job in jobs { job() }
    }

    /// Starts the loop on a new thread (for tests and embedding); returns at once.
    public func runOnNewThread() {
        let thread = LoopThread(loop: self)
        thread.start()
    }
}

/// Owns the pthread that runs a loop.
private final class LoopThread: Sendable {
    let loop: EventLoop
    init(loop: EventLoop) { self.loop = loop }

    func start() {
        let box = Unmanaged.passRetained(self)
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { raw in
                let owner = Unmanaged<LoopThread>.fromOpaque(raw!).takeRetainedValue()
                owner.loop.run()
                return nil
            }, box.toOpaque())
        if created == 0 {
            pthread_detach(thread)
        } else {
            box.release()
        }
    }
}
