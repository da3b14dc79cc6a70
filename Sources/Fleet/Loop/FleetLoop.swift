import AgentCore
import Glibc
import Synchronization

/// What the MQTT driver needs from an event loop, and nothing more: watch a
/// descriptor for readability and writability, run a job on the loop's
/// thread, run a job after a delay. Every handler runs on the loop's thread
/// and must not block.
public protocol FleetLoop: Sendable {
    /// Watches `fd`; `handler` gets `(readable, writable)` (an error or hang-up counts as readable).
    func watch(_ fd: Int32, reading: Bool, writing: Bool, _ handler: @escaping @Sendable (Bool, Bool) -> Void)
    /// Changes what `fd` is watched for.
    func setInterest(_ fd: Int32, reading: Bool, writing: Bool)
    /// Stops watching `fd` (the caller closes it).
    func unwatch(_ fd: Int32)
    /// Runs `job` on the loop's thread, soon, in submission order.
    func execute(_ job: @escaping @Sendable () -> Void)
    /// Runs `job` on the loop's thread once `delay` has passed, unless cancelled.
    func schedule(after delay: Duration, _ job: @escaping @Sendable () -> Void) -> FleetTimer
}

/// A scheduled job that has not run yet can be cancelled.
public final class FleetTimer: Sendable {
    private let state = Mutex<(cancelled: Bool, release: (@Sendable () -> Void)?)>((false, nil))

    /// A timer not cancelled yet.
    public init() {}

    /// What cancelling also does (free the loop's resources for the job);
    /// runs at once when the timer was already cancelled.
    public func onCancel(_ release: @escaping @Sendable () -> Void) {
        let run = state.withLock { state -> Bool in
            if state.cancelled { return true }
            state.release = release
            return false
        }
        if run { release() }
    }

    /// Keeps the job from running (no effect once it ran).
    public func cancel() {
        let release = state.withLock { state -> (@Sendable () -> Void)? in
            defer {
                state.cancelled = true
                state.release = nil
            }
            return state.cancelled ? nil : state.release
        }
        release?()
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { state.withLock { $0.cancelled } }
}

/// ``FleetLoop`` on the agent's poll(2) ``EventLoop``. The loop has no timers
/// of its own: a delayed job sleeps in a task (which holds no thread) and is
/// then handed to the loop.
public struct AgentLoopAdapter: FleetLoop {
    private let loop: EventLoop

    /// An adapter over `loop`.
    public init(_ loop: EventLoop) { self.loop = loop }

    public func watch(_ fd: Int32, reading: Bool, writing: Bool, _ handler: @escaping @Sendable (Bool, Bool) -> Void) {
        loop.register(fd, events: Self.events(reading, writing)) { revents in
            let readable = revents & Int16(POLLIN | POLLHUP | POLLERR) != 0
            handler(readable, revents & Int16(POLLOUT) != 0)
        }
    }

    public func setInterest(_ fd: Int32, reading: Bool, writing: Bool) {
        loop.update(fd, events: Self.events(reading, writing))
    }

    public func unwatch(_ fd: Int32) { loop.unregister(fd) }

    public func execute(_ job: @escaping @Sendable () -> Void) { loop.execute(job) }

    public func schedule(after delay: Duration, _ job: @escaping @Sendable () -> Void) -> FleetTimer {
        let timer = FleetTimer()
        let task = Task { [loop] in
            guard (try? await Task.sleep(for: delay)) != nil else { return }
            loop.execute { if !timer.isCancelled { job() } }
        }
        timer.onCancel { task.cancel() }
        return timer
    }

    private static func events(_ reading: Bool, _ writing: Bool) -> Int16 {
        (reading ? Int16(POLLIN) : 0) | (writing ? Int16(POLLOUT) : 0)
    }
}
