import CLinux
import Glibc
import Synchronization

/// A child process the agent starts and owns (the private dbus-daemon,
/// blesim): standard output on a pipe the agent reads, standard error shared
/// with the agent's, signals unblocked and at their defaults, a parent-death
/// signal so it never outlives the agent, and a pidfd so waiting for it is an
/// event with a deadline, never a sleep.
final class ChildProcess: Sendable {
    /// The child's process id.
    let pid: pid_t
    /// What was started, for messages.
    let name: String
    private let output: Int32
    private let pidfd: Int32
    private let reaped = Mutex(false)
    private let buffered = Mutex<[UInt8]>([])

    /// Starts `executable` with `arguments` (argv[1...]). The child gets
    /// SIGTERM when the agent process dies, however it dies (SIGKILL
    /// included): it is forked from the ``SpawnThread`` with PR_SET_PDEATHSIG.
    init(executable: String, arguments: [String], name: String) throws(ProcessFailure) {
        var fds: [Int32] = [0, 0]
        guard clinux_pipe_cloexec(&fds) == 0 else { throw ProcessFailure("\(name): pipe: \(Self.errnoText())") }
        var errorPipe: [Int32] = [0, 0]
        guard clinux_pipe_cloexec(&errorPipe) == 0 else {
            let text = Self.errnoText()
            close(fds[0])
            close(fds[1])
            throw ProcessFailure("\(name): pipe: \(text)")
        }
        let (outputWrite, errorWrite) = (fds[1], errorPipe[1])
        let spawned = SpawnThread.shared.run { () -> (pid: pid_t, errno: Int32) in
            Self.spawn(executable, arguments, stdout: outputWrite, errorReport: errorWrite)
        }
        close(fds[1])
        close(errorPipe[1])
        // The child reports a failure before execve on the error pipe; a
        // successful execve closes it unwritten.
        var failure: Int32 = 0
        var got = 0
        if let spawned, spawned.pid > 0 {
            while true {
                got = withUnsafeMutableBytes(of: &failure) { read(errorPipe[0], $0.baseAddress, $0.count) }
                if got < 0 && errno == EINTR { continue }
                break
            }
        }
        close(errorPipe[0])
        guard let spawned, spawned.pid > 0, got <= 0 else {
            if let pid = spawned?.pid, pid > 0 {
                var ignored: Int32 = 0
                waitpid(pid, &ignored, 0)
            }
            close(fds[0])
            var reason = "the spawn thread could not be started"
            if let spawned { reason = String(cString: strerror(spawned.pid > 0 ? failure : spawned.errno)) }
            throw ProcessFailure("cannot start \(name) (\(executable)): \(reason)")
        }
        let child = spawned.pid
        let pidfd = clinux_pidfd_open(child)
        guard pidfd >= 0 else {
            let text = Self.errnoText()
            kill(child, SIGKILL)
            var ignored: Int32 = 0
            waitpid(child, &ignored, 0)
            close(fds[0])
            throw ProcessFailure("\(name): pidfd_open: \(text)")
        }
        self.pid = child
        self.name = name
        self.output = fds[0]
        self.pidfd = pidfd
    }

    /// Forks and executes on the calling (spawn) thread: the agent's
    /// environment without NOTIFY_SOCKET (systemd hears the agent, not its
    /// children), standard output onto `stdout`, SIGTERM on the agent's death.
    private static func spawn(
        _ executable: String, _ arguments: [String], stdout: Int32, errorReport: Int32
    ) -> (pid: pid_t, errno: Int32) {
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = []
        var entry = environ
        while let variable = entry.pointee {
            if !String(cString: variable).hasPrefix("NOTIFY_SOCKET=") { envp.append(strdup(variable)) }
            entry += 1
        }
        envp.append(nil)
        defer { (argv + envp).forEach { free($0) } }
        let pid = clinux_spawn_owned(executable, argv, envp, stdout, errorReport, SIGTERM)
        return (pid, pid < 0 ? errno : 0)
    }

    deinit {
        terminate(within: .seconds(5))
        close(output)
        close(pidfd)
    }

    /// Reads standard output until a line satisfying `accept` arrives and
    /// returns it; fails if the child exits or closes its output first, or
    /// `deadline` passes. Blocks the calling thread (see ``BlockingCall``).
    func waitForLine(within deadline: Duration, _ accept: (String) -> Bool) throws(ProcessFailure) -> String {
        let end = ContinuousClock.now.advanced(by: deadline)
        while true {
            let line: String? = buffered.withLock { bytes in
                guard let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
                let line = String(decoding: bytes[..<newline], as: UTF8.self)
                bytes.removeFirst(newline + 1)
                return line
            }
            if let line {
                if accept(line) { return line }
                continue
            }
            let remaining = ContinuousClock.now.duration(to: end)
            guard remaining > .zero else {
                throw ProcessFailure("\(name) did not get ready within \(deadline.components.seconds) s")
            }
            var fds = [
                pollfd(fd: output, events: Int16(POLLIN), revents: 0),
                pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0),
            ]
            let milliseconds = Int32(
                clamping: remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000
                    + 1)
            let ready = poll(&fds, 2, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 { throw ProcessFailure("\(name): poll: \(Self.errnoText())") }
            if fds[0].revents != 0 {
                var chunk = [UInt8](repeating: 0, count: 4096)
                let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
                if count > 0 {
                    buffered.withLock { $0 += chunk[..<count] }
                    continue
                }
                if count < 0 && errno == EINTR { continue }
                throw ProcessFailure("\(name) closed its output before it was ready\(exitNote())")
            }
            if fds[1].revents != 0 { throw ProcessFailure("\(name) exited before it was ready\(exitNote())") }
        }
    }

    /// Whether the child is still running (not yet exited).
    var isRunning: Bool {
        var fds = [pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)]
        return poll(&fds, 1, 0) == 0
    }

    /// Sends SIGTERM, waits for the exit up to `deadline`, then SIGKILL, and
    /// reaps the child. Idempotent; blocks the calling thread.
    func terminate(within deadline: Duration) {
        guard reaped.withLock({ $0 }) == false else { return }
        if isRunning {
            kill(pid, SIGTERM)
            var fds = [pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)]
            let milliseconds = Int32(clamping: deadline.components.seconds * 1000)
            while true {
                let ready = poll(&fds, 1, milliseconds)
                if ready < 0 && errno == EINTR { continue }
                if ready == 0 { kill(pid, SIGKILL) }
                break
            }
        }
        reap()
    }

    private func reap() {
        reaped.withLock { done in
            guard !done else { return }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            done = true
        }
    }

    private func exitNote() -> String {
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return "" }
        reaped.withLock { $0 = true }
        let code = (status >> 8) & 0xff
        let signal = status & 0x7f
        return signal == 0 ? " (exit status \(code))" : " (killed by signal \(signal))"
    }

    static func errnoText() -> String { String(cString: strerror(errno)) }
}

/// Why a child process could not be started or did not get ready.
public struct ProcessFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// One sentence.
    public let description: String

    init(_ description: String) { self.description = description }
}

/// Runs blocking work (waiting on a child's pipe or exit) on a thread of its
/// own, so the cooperative pool is never held.
enum BlockingCall {
    static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            let box = Unmanaged.passRetained(WorkBox { continuation.resume(returning: work()) })
            var thread = pthread_t()
            let started = pthread_create(
                &thread, nil,
                { raw in
                    let box = Unmanaged<WorkBox>.fromOpaque(raw!).takeRetainedValue()
                    box.work()
                    return nil
                }, box.toOpaque())
            if started == 0 {
                pthread_detach(thread)
            } else {
                box.takeRetainedValue().work()
            }
        }
    }

    private final class WorkBox: Sendable {
        let work: @Sendable () -> Void
        init(_ work: @escaping @Sendable () -> Void) { self.work = work }
    }
}
