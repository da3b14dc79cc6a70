internal import CLinux
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One thread's event loop over epoll: file descriptors (sockets, pipes, pidfds, signalfds), timers, and jobs
/// handed to it from any thread through a mailbox woken by an eventfd.
///
/// Each turn runs the jobs posted so far (in posting order), then the timers that are due, then waits in
/// `epoll_wait` until a descriptor is ready, the next timer is due or a job arrives, and calls the handlers of the
/// ready descriptors. Nothing in it sleeps otherwise. Handlers, timers and jobs all run on the loop's thread and
/// must not block: blocking work goes to a ``BlockingPool``.
///
/// Every method may be called from any thread. A registration is named by a token that is never reused, so an
/// event for a descriptor deregistered (and its number reused) meanwhile is dropped, not delivered to the new one.
/// Deregister a descriptor before closing it.
///
/// The process has one shared loop (``shared``) on a thread of its own; a D-Bus connection runs one of its own
/// (its owner thread). Readiness is level-triggered: a handler that leaves data unread is called again, and one
/// that is told of a hang-up or an error must deregister (or it is told again).
public final class EventLoop: Sendable {
    /// What a registration waits for.
    public struct Interest: OptionSet, Hashable, Sendable {
        /// The bits.
        public let rawValue: UInt8
        /// Interest with the bits `rawValue`.
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// Data to read, a connection to accept, the end of the stream (`EPOLLIN`).
        public static let readable = Interest(rawValue: 1)
        /// Room to write (`EPOLLOUT`).
        public static let writable = Interest(rawValue: 2)
    }

    /// What a descriptor is ready for; hang-up and error are reported whatever the interest.
    public struct Readiness: OptionSet, Hashable, Sendable {
        /// The bits.
        public let rawValue: UInt8
        /// Readiness with the bits `rawValue`.
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// `EPOLLIN`.
        public static let readable = Readiness(rawValue: 1)
        /// `EPOLLOUT`.
        public static let writable = Readiness(rawValue: 2)
        /// `EPOLLHUP`: both directions are closed.
        public static let hangUp = Readiness(rawValue: 4)
        /// `EPOLLERR`.
        public static let error = Readiness(rawValue: 8)
    }

    /// A descriptor's registration.
    public struct Registration: Hashable, Sendable {
        let token: UInt64
    }

    /// A scheduled timer.
    public struct Timer: Hashable, Sendable {
        let id: UInt64
    }

    /// A readiness handler.
    public typealias Handler = @Sendable (Readiness) -> Void
    /// A job or a timer's work.
    public typealias Job = @Sendable () -> Void

    private struct Source {
        var fd: Int32
        var interest: Interest
        var handler: Handler
    }

    private struct State {
        var sources: [UInt64: Source] = [:]
        var nextToken: UInt64 = 1
        var jobs: [Job] = []
        var timers = TimerQueue<Job>()
        var nextTimer: UInt64 = 1
        var wakePending = false
        var stopping = false
        var closed = false
    }

    private static let wakeToken: UInt64 = 0
    private static let batch = 64

    /// The loop's name (its thread's name, in messages).
    public let name: String
    private let epoll: FileDescriptor
    private let wakeFD: FileDescriptor
    private let state = Mutex(State())
    /// Held by the loop's thread while it looks up and runs a descriptor's handler, so that ``deregister(_:)`` on
    /// another thread can wait out a handler already running: once it returns, the descriptor may be closed and its
    /// number reused without a late handler reading from whatever the number names then.
    private let dispatching = Mutex(())
    private let owner = Atomic<UInt>(0)

    /// A loop that is not running yet: ``run()`` it on a thread, or use ``start(name:)``.
    public init(name: String) throws(SystemError) {
        self.name = name
        epoll = FileDescriptor(rawValue: try systemCall("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) })
        do {
            wakeFD = FileDescriptor(
                rawValue: try systemCall("eventfd") { eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC)) })
        } catch {
            epoll.close()
            throw error
        }
        do {
            try systemCall("epoll_ctl") {
                clinux_epoll_ctl(epoll.rawValue, EPOLL_CTL_ADD, wakeFD.rawValue, EPOLLIN.rawValue, Self.wakeToken)
            }
        } catch {
            wakeFD.close()
            epoll.close()
            throw error
        }
    }

    deinit {
        wakeFD.close()
        epoll.close()
    }

    /// A loop running on a new thread named `name`.
    public static func start(name: String) throws(SystemError) -> EventLoop {
        let loop = try EventLoop(name: name)
        try IOThread.spawn(name: name) { loop.run() }
        return loop
    }

    /// The process's shared loop, on a thread of its own started at first use, never stopped. It serves what needs
    /// no thread of its own: the agent's control socket, signals and children, the AcquireNotify/AcquireWrite
    /// sockets, plugins' sockets.
    public static let shared: EventLoop = {
        do {
            return try EventLoop.start(name: "io-shared")
        } catch {
            fatalError("cannot start the shared event loop: \(error)")
        }
    }()

    /// Whether the caller runs on this loop's thread.
    public var isCurrent: Bool { owner.load(ordering: .acquiring) == UInt(pthread_self()) }

    // MARK: Jobs

    /// Runs `job` on the loop's thread soon, after the jobs posted before it. Returns `false` (and drops `job`) once
    /// the loop has stopped.
    @discardableResult
    public func execute(_ job: @escaping Job) -> Bool {
        let onLoop = isCurrent
        let (accepted, mustWake) = state.withLock { state -> (Bool, Bool) in
            guard !state.closed else { return (false, false) }
            state.jobs.append(job)
            if onLoop || state.wakePending { return (true, false) }
            state.wakePending = true
            return (true, true)
        }
        if mustWake { wake() }
        return accepted
    }

    /// Runs `body` on the loop's thread and returns its result; `nil` if the loop has stopped.
    public func perform<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T? {
        await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
            let accepted = execute { continuation.resume(returning: body()) }
            if !accepted { continuation.resume(returning: nil) }
        }
    }

    /// Makes ``run()`` return after the current turn; jobs posted before it still run, later ones are refused.
    public func stop() {
        let mustWake = state.withLock { state -> Bool in
            state.stopping = true
            return !isCurrent
        }
        if mustWake { wake() }
    }

    private func wake() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { Glibc.write(wakeFD.rawValue, $0.baseAddress, 8) }
    }

    // MARK: Descriptors

    /// Watches `fd` for `interest`; `handler` runs on the loop for each readiness.
    /// - Throws: ``SystemError`` from `epoll_ctl` (`EPERM` for a regular file, `EEXIST` if `fd` is registered).
    @discardableResult
    public func register(
        _ fd: FileDescriptor, interest: Interest, handler: @escaping Handler
    ) throws(SystemError) -> Registration {
        let token = state.withLock { state -> UInt64 in
            let token = state.nextToken
            state.nextToken += 1
            state.sources[token] = Source(fd: fd.rawValue, interest: interest, handler: handler)
            return token
        }
        do {
            try systemCall("epoll_ctl") {
                clinux_epoll_ctl(epoll.rawValue, EPOLL_CTL_ADD, fd.rawValue, Self.events(interest), token)
            }
        } catch {
            _ = state.withLock { $0.sources.removeValue(forKey: token) }
            throw error
        }
        return Registration(token: token)
    }

    /// Changes what `registration` waits for (an empty interest still hears hang-up and errors).
    public func setInterest(_ interest: Interest, for registration: Registration) {
        state.withLock { state in
            guard let source = state.sources[registration.token], source.interest != interest else { return }
            state.sources[registration.token]?.interest = interest
            _ = clinux_epoll_ctl(
                epoll.rawValue, EPOLL_CTL_MOD, source.fd, Self.events(interest), registration.token)
        }
    }

    /// The interest of `registration`, or `nil` when it is gone.
    public func interest(of registration: Registration) -> Interest? {
        state.withLock { $0.sources[registration.token]?.interest }
    }

    /// Stops watching; the handler is not called again (the caller closes the descriptor afterwards). Called off
    /// the loop's thread, it returns once a run of the handler that had already begun has ended. Handlers never
    /// block, so the wait is short; do not call it holding a lock a handler of this loop takes.
    public func deregister(_ registration: Registration) {
        state.withLock { state in
            guard let source = state.sources.removeValue(forKey: registration.token) else { return }
            _ = clinux_epoll_ctl(epoll.rawValue, EPOLL_CTL_DEL, source.fd, 0, 0)
        }
        if owner.load(ordering: .acquiring) != UInt(pthread_self()) { dispatching.withLock { _ in } }
    }

    private static func events(_ interest: Interest) -> UInt32 {
        var events: UInt32 = 0
        if interest.contains(.readable) { events |= EPOLLIN.rawValue }
        if interest.contains(.writable) { events |= EPOLLOUT.rawValue }
        return events
    }

    private static func readiness(_ events: UInt32) -> Readiness {
        var readiness: Readiness = []
        if events & EPOLLIN.rawValue != 0 { readiness.insert(.readable) }
        if events & EPOLLOUT.rawValue != 0 { readiness.insert(.writable) }
        if events & EPOLLHUP.rawValue != 0 { readiness.insert(.hangUp) }
        if events & EPOLLERR.rawValue != 0 { readiness.insert(.error) }
        return readiness
    }

    // MARK: Timers

    /// Runs `job` on the loop at `deadline` (at once if it passed), unless cancelled first.
    @discardableResult
    public func schedule(at deadline: ContinuousClock.Instant, _ job: @escaping Job) -> Timer {
        let onLoop = isCurrent
        let (id, mustWake) = state.withLock { state -> (UInt64, Bool) in
            let id = state.nextTimer
            state.nextTimer += 1
            guard !state.closed else { return (id, false) }
            state.timers.insert(job, id: id, deadline: deadline)
            if onLoop || state.wakePending { return (id, false) }
            state.wakePending = true
            return (id, true)
        }
        if mustWake { wake() }
        return Timer(id: id)
    }

    /// Runs `job` on the loop after `delay`, unless cancelled first.
    @discardableResult
    public func schedule(after delay: Duration, _ job: @escaping Job) -> Timer {
        schedule(at: .now.advanced(by: delay), job)
    }

    /// Cancels `timer`; whether it had not run yet.
    @discardableResult
    public func cancel(_ timer: Timer) -> Bool {
        state.withLock { $0.timers.cancel(timer.id) }
    }

    // MARK: Running

    /// Runs the loop on the calling thread until ``stop()``; then runs the jobs still queued and refuses more.
    public func run() {
        owner.store(UInt(pthread_self()), ordering: .releasing)
        var tokens = [UInt64](repeating: 0, count: Self.batch)
        var events = [UInt32](repeating: 0, count: Self.batch)
        while true {
            let jobs = state.withLock { state -> [Job] in
                state.wakePending = false
                defer { state.jobs = [] }
                return state.jobs
            }
            for job in jobs { job() }
            let due = state.withLock { $0.timers.popDue(now: .now) }
            for job in due { job() }
            guard let timeout = nextTimeout() else { break }
            let count = clinux_epoll_wait(epoll.rawValue, &tokens, &events, Int32(Self.batch), timeout)
            if count < 0 {
                if Errno.current == .interrupted { continue }
                fatalError("epoll_wait on the \(name) loop failed: \(Errno.current)")
            }
            for index in 0..<Int(count) {
                if tokens[index] == Self.wakeToken {
                    var counter: UInt64 = 0
                    _ = withUnsafeMutableBytes(of: &counter) { Glibc.read(wakeFD.rawValue, $0.baseAddress, 8) }
                    continue
                }
                dispatching.withLock { _ in
                    guard let handler = state.withLock({ $0.sources[tokens[index]]?.handler }) else { return }
                    handler(Self.readiness(events[index]))
                }
            }
        }
        let leftover = state.withLock { state -> [Job] in
            state.closed = true
            state.timers.removeAll()
            defer { state.jobs = [] }
            return state.jobs
        }
        for job in leftover { job() }
        owner.store(0, ordering: .releasing)
    }

    /// The wait before the next turn in milliseconds (0 with jobs queued, -1 with nothing scheduled), or `nil` to
    /// stop.
    private func nextTimeout() -> Int32? {
        state.withLock { state -> Int32? in
            if state.stopping { return nil }
            if !state.jobs.isEmpty { return 0 }
            guard let due = state.timers.earliest() else { return -1 }
            let wait = ContinuousClock.now.duration(to: due)
            if wait <= .zero { return 0 }
            let (seconds, attoseconds) = wait.components
            // Rounded up: waking early would only find nothing due and wait again.
            return Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
        }
    }
}
