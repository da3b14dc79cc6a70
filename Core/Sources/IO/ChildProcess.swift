internal import CLinux
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A child process: started from an ``EventLoop``'s thread, followed through a pidfd on that loop (its exit is an
/// event: it is reaped as soon as it exits, and awaiting it never blocks a thread), its output read on the loop.
///
/// With a `deathSignal` the child gets that signal when the thread that forked it ends (`PR_SET_PDEATHSIG`; Linux
/// ties it to the thread, not the process). Children are forked by their loop's thread, which for
/// ``EventLoop/shared`` lives as long as the process: the signal comes exactly when the process dies, however it
/// dies (SIGKILL included).
///
/// Releasing a `ChildProcess` whose child still runs never blocks: it sends SIGTERM, and SIGKILL 5 s later if the
/// child is still there; the loop reaps it.
public final class ChildProcess: Sendable {
    /// Where the child's standard input comes from.
    public enum Input: Sendable {
        /// `/dev/null`.
        case null
        /// The parent's.
        case inherit
        /// A pipe whose write end is ``ChildProcess/standardInput``.
        case pipe
    }

    /// Where one of the child's outputs goes.
    public enum Output: Sendable {
        /// The parent's.
        case inherit
        /// `/dev/null`.
        case null
        /// A pipe read on the loop into an ``OutputCollector`` keeping at most `limit` bytes.
        case collect(limit: Int)
    }

    /// How a child ended.
    public struct ExitStatus: Hashable, Sendable, CustomStringConvertible {
        /// The exit code, when it exited.
        public var code: Int32?
        /// The signal that killed it, when one did.
        public var signal: Int32?

        /// The status as a shell reports it: the code, or 128 plus the signal; -1 when it is not known (the
        /// child was reaped elsewhere), which no exit or signal gives.
        public var shellStatus: Int32 {
            if let code { return code }
            if let signal { return 128 + signal }
            return -1
        }

        /// `exit status N`, `killed by signal N`, or that it is not known.
        public var description: String {
            if let code { return "exit status \(code)" }
            if let signal { return "killed by signal \(signal)" }
            return "status unknown (reaped elsewhere)"
        }

        /// The status of a child another waiter reaped first (nothing is known).
        static let unknown = ExitStatus(code: nil, signal: nil)

        private init(code: Int32?, signal: Int32?) {
            self.code = code
            self.signal = signal
        }

        init(waitStatus status: Int32) {
            if status & 0x7f == 0 {
                code = (status >> 8) & 0xff
            } else {
                signal = status & 0x7f
            }
        }
    }

    /// The child's process id.
    public let pid: Int32
    /// What was started, for messages.
    public let name: String
    /// The child's standard output, when collected.
    public let standardOutput: OutputCollector?
    /// The child's standard error, when collected.
    public let standardError: OutputCollector?
    /// The write end of the child's standard input, when it is a pipe (blocking; the caller closes it).
    public let standardInput: FileDescriptor?
    private let watch: ExitWatch

    private init(
        pid: Int32, name: String, watch: ExitWatch, standardInput: FileDescriptor?, standardOutput: OutputCollector?,
        standardError: OutputCollector?
    ) {
        self.pid = pid
        self.name = name
        self.watch = watch
        self.standardInput = standardInput
        self.standardOutput = standardOutput
        self.standardError = standardError
    }

    deinit { watch.terminate(grace: .seconds(5)) }

    /// Starts `executable` (a path, or a name looked up in `PATH`) with `arguments` (argv[1...]), its environment
    /// `environment` (`nil`: this process's), forked on `loop`'s thread.
    /// - Throws: ``SystemError`` when a pipe, the fork or the `execve` failed (the errno of the failed step).
    public static func spawn(
        _ executable: String, _ arguments: [String], name: String? = nil, environment: [String]? = nil,
        standardInput: Input = .null, standardOutput: Output = .inherit, standardError: Output = .inherit,
        deathSignal: Int32? = nil, loop: EventLoop = .shared
    ) async throws(SystemError) -> ChildProcess {
        let path = try resolve(executable)
        var opened: [FileDescriptor] = []
        func placed(_ fd: FileDescriptor) throws(SystemError) -> FileDescriptor {
            let moved = fd.rawValue < 3 ? try fd.duplicate(atLeast: 3) : fd
            if moved != fd { fd.close() }
            opened.append(moved)
            return moved
        }
        func null(_ mode: FileDescriptor.AccessMode) throws(SystemError) -> FileDescriptor {
            try placed(try FileDescriptor.open("/dev/null", mode))
        }
        func output(_ output: Output) throws(SystemError) -> (child: Int32, parent: FileDescriptor?) {
            switch output {
            case .inherit: return (-1, nil)
            case .null: return (try null(.writeOnly).rawValue, nil)
            case .collect:
                let (read, write) = try FileDescriptor.pipe()
                return (try placed(write).rawValue, try placed(read))
            }
        }
        let childEnds: (input: Int32, output: Int32, error: Int32, report: FileDescriptor)
        let parentEnds:
            (input: FileDescriptor?, output: FileDescriptor?, error: FileDescriptor?, report: FileDescriptor)
        do {
            var input: (child: Int32, parent: FileDescriptor?) = (-1, nil)
            switch standardInput {
            case .null: input.child = try null(.readOnly).rawValue
            case .inherit: break
            case .pipe:
                let (read, write) = try FileDescriptor.pipe()
                input = (try placed(read).rawValue, try placed(write))
            }
            let out = try output(standardOutput)
            let err = try output(standardError)
            let (reportRead, reportWrite) = try FileDescriptor.pipe()
            childEnds = (input.child, out.child, err.child, try placed(reportWrite))
            parentEnds = (input.parent, out.parent, err.parent, try placed(reportRead))
        } catch {
            for fd in opened { fd.close() }
            throw error
        }
        let parentSide = Set(
            [parentEnds.input, parentEnds.output, parentEnds.error, parentEnds.report].compactMap { $0 })
        let environment = environment ?? currentEnvironment()
        let spawned = await loop.perform { () -> Result<(Int32, FileDescriptor), SystemError> in
            let argv = ([path] + arguments).map { strdup($0) } + [nil]
            let envp = environment.map { strdup($0) } + [nil]
            defer { (argv + envp).forEach { free($0) } }
            let pid = clinux_spawn(
                path, argv, envp, childEnds.input, childEnds.output, childEnds.error, childEnds.report.rawValue,
                deathSignal ?? 0)
            guard pid > 0 else { return .failure(.current("fork")) }
            let pidfd = clinux_pidfd_open(pid)
            guard pidfd >= 0 else {
                let error = SystemError.current("pidfd_open")
                kill(pid, SIGKILL)
                var ignored: Int32 = 0
                waitpid(pid, &ignored, 0)
                return .failure(error)
            }
            return .success((pid, FileDescriptor(rawValue: pidfd)))
        }
        for fd in opened where !parentSide.contains(fd) { fd.close() }
        let started: (pid: Int32, pidfd: FileDescriptor)
        do throws(SystemError) {
            guard let spawned else { throw SystemError("fork", errno: .canceled, detail: "the event loop stopped") }
            started = try spawned.get()
        } catch {
            for fd in parentSide { fd.close() }
            throw error
        }
        let watch: ExitWatch
        let collectors: (output: OutputCollector?, error: OutputCollector?)
        do throws(SystemError) {
            watch = try ExitWatch(pid: started.pid, pidfd: started.pidfd, loop: loop)
            let report = try OutputCollector(parentEnds.report, loop: loop, limit: 64)
            // A successful execve closes the report pipe unwritten; a failed step writes its errno first.
            _ = await report.waitForEnd(timeout: .seconds(60))
            let bytes = report.bytes
            if bytes.count >= 4 {
                let code = bytes.withUnsafeBytes { $0.loadUnaligned(as: Int32.self) }
                _ = await watch.wait(timeout: .seconds(5))
                throw SystemError("execve", path: path, errno: Errno(rawValue: code))
            }
            func collector(_ fd: FileDescriptor?, _ output: Output) throws(SystemError) -> OutputCollector? {
                guard let fd else { return nil }
                return try OutputCollector(fd, loop: loop, limit: limit(of: output))
            }
            collectors = (
                try collector(parentEnds.output, standardOutput), try collector(parentEnds.error, standardError)
            )
        } catch {
            parentEnds.input?.close()
            parentEnds.output?.close()
            parentEnds.error?.close()
            throw error
        }
        return ChildProcess(
            pid: started.pid, name: name ?? executable, watch: watch, standardInput: parentEnds.input,
            standardOutput: collectors.output, standardError: collectors.error)
    }

    private static func limit(of output: Output) -> Int {
        if case .collect(let limit) = output { return limit }
        return 1
    }

    /// `executable` itself when it has a `/`, else the first executable file of that name in `PATH`.
    static func resolve(_ executable: String) throws(SystemError) -> String {
        if executable.contains("/") { return executable }
        let search = getenv("PATH").map { String(cString: $0) } ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in search.split(separator: ":") {
            let candidate = "\(directory)/\(executable)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        throw SystemError("execve", path: executable, errno: .noSuchFile, detail: "not found in PATH")
    }

    /// This process's environment, as `NAME=value` entries.
    public static func currentEnvironment() -> [String] {
        var entries: [String] = []
        var pointer = environ
        while let entry = pointer.pointee {
            entries.append(String(cString: entry))
            pointer += 1
        }
        return entries
    }

    /// Whether the child has not exited yet.
    public var isRunning: Bool { watch.status == nil }

    /// How the child ended, once it has.
    public var exitStatus: ExitStatus? { watch.status }

    /// Sends `signal` while the child runs (through its pidfd: never to a reused pid).
    public func signal(_ signal: Int32) { watch.signal(signal) }

    /// Waits for the child to exit.
    public func wait() async -> ExitStatus {
        // A day is as good as for ever for a child, and keeps the timer arithmetic finite.
        while true { if let status = await watch.wait(timeout: .seconds(86_400)) { return status } }
    }

    /// Waits at most `timeout` for the child to exit.
    public func wait(timeout: Duration) async -> ExitStatus? { await watch.wait(timeout: timeout) }

    /// Sends SIGTERM, waits up to `grace`, then SIGKILL, and returns how it ended (at once if it already had).
    @discardableResult
    public func terminate(within grace: Duration) async -> ExitStatus {
        watch.signal(SIGTERM)
        if let status = await watch.wait(timeout: grace) { return status }
        watch.signal(SIGKILL)
        return await wait()
    }

    /// Waits at most `timeout` for the process `pid` (any process, not only a child) to exit: `true` once it has,
    /// `false` when it still runs. A pid that does not exist has exited.
    public static func waitForExit(of pid: Int32, timeout: Duration, loop: EventLoop = .shared) async -> Bool {
        let fd = clinux_pidfd_open(pid)
        guard fd >= 0 else { return true }
        let pidfd = FileDescriptor(rawValue: fd)
        let exited = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let once = Once(continuation)
            do {
                let registration = try loop.register(pidfd, interest: .readable) { _ in once.resume(true) }
                let timer = loop.schedule(after: timeout) { once.resume(false) }
                once.onResume {
                    loop.cancel(timer)
                    loop.deregister(registration)
                }
            } catch {
                once.resume(false)
            }
        }
        pidfd.close()
        return exited
    }
}

/// A continuation resumed once, by whichever comes first; then runs its clean-up.
final class Once<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, Never>?
        var value: T?
        var cleanUp: (@Sendable () -> Void)?
    }

    private let state: Mutex<State>

    init(_ continuation: CheckedContinuation<T, Never>) {
        state = Mutex(State(continuation: continuation))
    }

    func resume(_ value: T) {
        let (continuation, cleanUp) = state.withLock { state in
            defer {
                state.continuation = nil
                state.cleanUp = nil
            }
            if state.continuation != nil { state.value = value }
            return (state.continuation, state.continuation != nil ? state.cleanUp : nil)
        }
        cleanUp?()
        continuation?.resume(returning: value)
    }

    /// Runs `cleanUp` when resumed (at once if it already was).
    func onResume(_ cleanUp: @escaping @Sendable () -> Void) {
        let resumed = state.withLock { state -> Bool in
            if state.continuation == nil { return true }
            state.cleanUp = cleanUp
            return false
        }
        if resumed { cleanUp() }
    }
}

/// A child's exit on the loop: the pidfd's readability reaps it (`waitpid` with `WNOHANG`, which no longer waits),
/// records the status and wakes whoever awaits it.
final class ExitWatch: Sendable {
    private struct State {
        var pidfd: FileDescriptor?
        var registration: EventLoop.Registration?
        var status: ChildProcess.ExitStatus?
        var waiters:
            [UInt64: (continuation: CheckedContinuation<ChildProcess.ExitStatus?, Never>, timer: EventLoop.Timer?)] =
                [:]
        var nextWaiter: UInt64 = 0
        var killTimer: EventLoop.Timer?
    }

    let pid: Int32
    private let loop: EventLoop
    private let state: Mutex<State>

    init(pid: Int32, pidfd: FileDescriptor, loop: EventLoop) throws(SystemError) {
        self.pid = pid
        self.loop = loop
        state = Mutex(State(pidfd: pidfd))
        do {
            // The handler keeps this watch alive until the child is reaped.
            let registration = try loop.register(pidfd, interest: .readable) { _ in self.reap() }
            // The loop may reap a child that already exited before the registration is stored here: then the
            // pidfd is still open (reap leaves it, as it could not deregister), and it is deregistered and closed
            // here, in that order (closed first, its number could be reused and the removal would hit another).
            let reaped = state.withLock { state -> Bool in
                if state.status != nil { return true }
                state.registration = registration
                return false
            }
            if reaped {
                loop.deregister(registration)
                let open = state.withLock { state -> FileDescriptor? in
                    defer { state.pidfd = nil }
                    return state.pidfd
                }
                open?.close()
            }
        } catch {
            kill(pid, SIGKILL)
            var ignored: Int32 = 0
            waitpid(pid, &ignored, 0)
            pidfd.close()
            throw error
        }
    }

    var status: ChildProcess.ExitStatus? { state.withLock { $0.status } }

    func signal(_ signal: Int32) {
        state.withLock { state in
            guard state.status == nil, let pidfd = state.pidfd else { return }
            _ = clinux_pidfd_send_signal(pidfd.rawValue, signal)
        }
    }

    /// SIGTERM now, SIGKILL after `grace` unless the child exited meanwhile.
    func terminate(grace: Duration) {
        guard status == nil else { return }
        signal(SIGTERM)
        let timer = loop.schedule(after: grace) { [self] in signal(SIGKILL) }
        let exited = state.withLock { state -> Bool in
            if state.status != nil { return true }
            state.killTimer = timer
            return false
        }
        if exited { loop.cancel(timer) }
    }

    func wait(timeout: Duration) async -> ChildProcess.ExitStatus? {
        await withCheckedContinuation { continuation in
            let id = state.withLock { state -> UInt64? in
                if state.status != nil { return nil }
                state.nextWaiter += 1
                state.waiters[state.nextWaiter] = (continuation, nil)
                return state.nextWaiter
            }
            guard let id else {
                continuation.resume(returning: status)
                return
            }
            let timer = loop.schedule(after: timeout) { [self] in
                let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
                waiter?.continuation.resume(returning: nil)
            }
            let waiting = state.withLock { state -> Bool in
                guard state.waiters[id] != nil else { return false }
                state.waiters[id]?.timer = timer
                return true
            }
            if !waiting { loop.cancel(timer) }
        }
    }

    private func reap() {
        // Once reaped, never again: a readiness event the loop already held for the pidfd may still call here,
        // and a second waitpid would fail with ECHILD and overwrite the status with `.unknown`.
        if state.withLock({ $0.status != nil }) { return }
        var raw: Int32 = 0
        let reaped = waitpid(pid, &raw, WNOHANG)
        if reaped == 0 || (reaped < 0 && Errno.current == .interrupted) { return }
        // ECHILD: reaped elsewhere; the pidfd stays readable, so the watch ends here either way.
        let status = reaped == pid ? ChildProcess.ExitStatus(waitStatus: raw) : .unknown
        let (registration, pidfd, waiters, timer) = state.withLock { state in
            state.status = status
            // Not registered yet (the child exited before init stored the registration): init deregisters and
            // closes the pidfd, and until then a readiness event finds the status and returns.
            let pidfd = state.registration == nil ? nil : state.pidfd
            defer {
                if pidfd != nil { state.pidfd = nil }
                state.registration = nil
                state.waiters = [:]
                state.killTimer = nil
            }
            return (state.registration, pidfd, Array(state.waiters.values), state.killTimer)
        }
        if let registration { loop.deregister(registration) }
        pidfd?.close()
        if let timer { loop.cancel(timer) }
        for waiter in waiters {
            if let timer = waiter.timer { loop.cancel(timer) }
            waiter.continuation.resume(returning: status)
        }
    }
}
