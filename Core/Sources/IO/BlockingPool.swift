internal import CLinux
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A small pool of threads for work that blocks: fsync, reads of configured paths, writes of state files. Async
/// code awaits it (``run(_:)``), so no blocking syscall ever runs on Swift's cooperative pool, whose two threads
/// (on two cores) everything else needs.
///
/// Jobs start in submission order on the first free thread (a ``BlockingQueue`` keeps a sequence of jobs in order
/// on top of it). The threads start at the first job. The queue of waiting jobs is bounded by what callers await:
/// each waiting job is one suspended caller.
///
/// Test hook: with `BLEAGENT_TEST_BLOCKING_DELAY_FILE=PATH` in the environment, while the file at PATH holds a number
/// N, every job first sleeps N milliseconds on its pool thread, as on a slow (or stuck) filesystem; nothing else
/// changes. A test starts the agent, lets it run, then writes the file.
public final class BlockingPool: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var head = 0
        var started = false
        var running = 0
    }

    /// The process's pool: as many threads as there are cores, at most 4, at least 2.
    public static let shared = BlockingPool(
        threads: min(4, max(2, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))), name: "io-blocking")

    /// The number of threads.
    public let threads: Int
    private let name: String
    private let state = Mutex(State())
    /// A semaphore eventfd: each job posts 1, each worker takes 1 before taking a job.
    private let ready: FileDescriptor
    private let delayFile: String?

    /// A pool of `threads` threads named `name`.
    public init(threads: Int, name: String) {
        self.threads = max(1, threads)
        self.name = name
        let fd = eventfd(0, Int32(EFD_SEMAPHORE | EFD_CLOEXEC))
        if fd < 0 { fatalError("cannot create the blocking pool's eventfd: \(Errno.current)") }
        ready = FileDescriptor(rawValue: fd)
        delayFile = getenv("BLEAGENT_TEST_BLOCKING_DELAY_FILE").map { String(cString: $0) }
    }

    /// Jobs submitted and not finished yet (waiting or running).
    public var pending: Int { state.withLock { $0.jobs.count - $0.head + $0.running } }

    /// Runs `work` on a pool thread and returns (or throws) what it did. The caller is suspended meanwhile, never
    /// blocked; cancelling it does not stop `work` (a syscall cannot be interrupted), it only stops waiting for it
    /// when `work` ends.
    public func run<T: Sendable, E: Error>(_ work: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        try await awaitResult(of: work, submittedBy: submit)
    }

    /// Queues `job` for a pool thread without waiting for it.
    public func submit(_ job: @escaping @Sendable () -> Void) {
        let startThreads = state.withLock { state -> Bool in
            state.jobs.append(job)
            defer { state.started = true }
            return !state.started
        }
        if startThreads {
            for index in 0..<threads {
                do {
                    try IOThread.spawn(name: "\(name)-\(index)") { [self] in work() }
                } catch {
                    fatalError("cannot start the blocking pool: \(error)")
                }
            }
        }
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { Glibc.write(ready.rawValue, $0.baseAddress, 8) }
    }

    private func work() -> Never {
        while true {
            var token: UInt64 = 0
            let got = withUnsafeMutableBytes(of: &token) { Glibc.read(ready.rawValue, $0.baseAddress, 8) }
            guard got == 8 else { continue }  // EINTR
            let job = state.withLock { state -> (@Sendable () -> Void)? in
                guard state.head < state.jobs.count else { return nil }
                let job = state.jobs[state.head]
                state.head += 1
                state.running += 1
                if state.head > 64 && state.head * 2 > state.jobs.count {
                    state.jobs.removeFirst(state.head)
                    state.head = 0
                }
                return job
            }
            guard let job else { continue }
            if let delayFile, let delay = Self.testDelay(delayFile) { Self.sleep(delay) }
            job()
            state.withLock { $0.running -= 1 }
        }
    }

    /// The test hook's delay: the number in the file at `path`, if there is one.
    private static func testDelay(_ path: String) -> Duration? {
        guard let bytes = try? RegularFile.read(path, limit: 64) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self).filter { !$0.isWhitespace }
        return Int(text).map { .milliseconds($0) }
    }

    private static func sleep(_ delay: Duration) {
        let (seconds, attoseconds) = delay.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}

/// Hands `work` to `submit` (a pool's or a queue's) before the caller's first suspension and awaits what it
/// returned or threw.
nonisolated(nonsending) func awaitResult<T: Sendable, E: Error>(
    of work: @escaping @Sendable () throws(E) -> T, submittedBy submit: (@escaping @Sendable () -> Void) -> Void
) async throws(E) -> T {
    let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, E>, Never>) in
        submit { continuation.resume(returning: Result { () throws(E) in try work() }) }
    }
    return try result.get()
}
