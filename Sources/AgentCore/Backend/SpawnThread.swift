import CLinux
import Glibc
import Synchronization

/// The one thread that forks every child the agent owns. Linux sends a
/// child's parent-death signal (PR_SET_PDEATHSIG) when the *thread* that
/// forked it ends, not the process; children forked from a short-lived
/// thread would be killed as soon as that thread returned. This thread is
/// started once and never ends, so the signal comes exactly when the agent
/// process dies, however it dies (SIGKILL included).
final class SpawnThread: Sendable {
    /// The process's spawn thread, started on first use.
    static let shared = SpawnThread()

    private let jobs = Mutex<[@Sendable () -> Void]>([])
    private let wake: (read: Int32, write: Int32)

    private init() {
        var fds: [Int32] = [-1, -1]
        if clinux_pipe_cloexec(&fds) != 0 { fds = [-1, -1] }
        wake = (fds[0], fds[1])
        guard fds[0] >= 0 else { return }
        let box = Unmanaged.passRetained(self)
        var thread = pthread_t()
        let started = pthread_create(
            &thread, nil,
            { raw in
                Unmanaged<SpawnThread>.fromOpaque(raw!).takeUnretainedValue().serve()
            }, box.toOpaque())
        if started == 0 {
            pthread_detach(thread)
        } else {
            box.release()
            close(fds[0])
            close(fds[1])
        }
    }

    /// Runs `work` on the spawn thread and returns its result; blocks the
    /// calling thread until then. If the thread could not be started, runs
    /// `work` on the caller's thread (the children then die with that thread:
    /// ``ChildProcess`` reports it in its start error instead).
    func run<T: Sendable>(_ work: @escaping @Sendable () -> T) -> T? {
        var done: [Int32] = [-1, -1]
        guard wake.write >= 0, clinux_pipe_cloexec(&done) == 0 else { return nil }
        defer {
            close(done[0])
            close(done[1])
        }
        let result = Slot<T>()
        let signal = done[1]
        jobs.withLock {
            $0.append {
                let value = work()
                result.value.withLock { $0 = value }
                var byte: UInt8 = 1
                _ = write(signal, &byte, 1)
            }
        }
        var byte: UInt8 = 1
        while write(wake.write, &byte, 1) < 0 && errno == EINTR {}
        while read(done[0], &byte, 1) < 0 && errno == EINTR {}
        return result.value.withLock { $0 }
    }

    private final class Slot<T: Sendable>: Sendable {
        let value = Mutex<T?>(nil)
    }

    private func serve() -> Never {
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            _ = read(wake.read, &buffer, buffer.count)
            let pending = jobs.withLock { jobs in
                defer { jobs.removeAll() }
                return jobs
            }
            for job in pending { job() }
        }
    }
}
