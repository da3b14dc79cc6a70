import CLinux
import Glibc
import Synchronization

/// Where the fleet layer runs blocking system calls (fsync of the outbox,
/// reading the credentials file, DNS and TCP connect, writing a pushed
/// config): never Swift's cooperative pool, never the event loop.
public protocol BlockingWork: Sendable {
    /// Runs `body` on a thread that may block and returns its result.
    func run<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T
    /// Runs `body` on that thread without waiting for it.
    func submit(_ body: @escaping @Sendable () -> Void)
}

/// ``BlockingWork`` on one thread of its own: jobs run one at a time, in
/// submission order (which also keeps the outbox's appends in order). The
/// thread waits on an eventfd; it never spins.
public final class BlockingThread: BlockingWork {
    private let jobs = Mutex<[@Sendable () -> Void]>([])
    private let wakeFD: Int32

    /// Starts the thread (`name` says what it is for).
    public init(name: String) {
        wakeFD = eventfd(0, Int32(EFD_CLOEXEC))
        let box = Unmanaged.passRetained(ThreadStart(owner: self, name: name))
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { raw in
                let start = Unmanaged<ThreadStart>.fromOpaque(raw!).takeRetainedValue()
                start.owner.serve()
                return nil
            }, box.toOpaque())
        if created == 0 { pthread_detach(thread) } else { box.release() }
    }

    public func submit(_ body: @escaping @Sendable () -> Void) {
        jobs.withLock { $0.append(body) }
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    public func run<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            submit { continuation.resume(returning: Result { () throws(E) -> T in try body() }) }
        }
        return try result.get()
    }

    private func serve() {
        while true {
            var counter: UInt64 = 0
            if read(wakeFD, &counter, 8) < 0 && errno != EINTR { return }
            while true {
                let batch = jobs.withLock { jobs in
                    defer { jobs = [] }
                    return jobs
                }
                if batch.isEmpty { break }
                for job in batch { job() }
            }
        }
    }
}

/// What the new thread needs; the thread holds the owner for the process's lifetime.
private final class ThreadStart: Sendable {
    let owner: BlockingThread
    let name: String
    init(owner: BlockingThread, name: String) {
        self.owner = owner
        self.name = name
    }
}
