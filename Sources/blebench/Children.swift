import Glibc
import Synchronization

/// Every process blebench starts, until it is reaped: whatever way blebench
/// ends (a failure, Ctrl-C, SIGTERM, its own time limit), ``killAll()`` ends
/// each one by its process id.
enum Children {
    private static let running = Mutex<[pid_t: String]>([:])

    /// Where a child's standard streams go: an fd of ours (dup'ed to it), or /dev/null.
    struct Streams {
        var input: Int32? = nil
        var output: Int32? = nil
        var error: Int32? = nil
    }

    /// Starts `arguments` (the first found on PATH unless it has a slash) with
    /// `environment` added to ours, an empty signal mask and default signal
    /// handlers, and records it.
    static func spawn(
        _ arguments: [String], environment: [String: String] = [:], streams: Streams = Streams()
    ) throws
        -> pid_t
    {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (fd, target) in [(streams.input, Int32(0)), (streams.output, 1), (streams.error, 2)] {
            if let fd {
                posix_spawn_file_actions_adddup2(&actions, fd, target)
            } else {
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            }
        }
        var attributes = SpawnAttributes()
        defer { attributes.destroy() }

        var merged: [String: String] = [:]
        var index = 0
        while let entry = environ[index] {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                merged[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            index += 1
        }
        merged.merge(environment) { $1 }
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let status = running.withLock { table -> Int32 in
            let status =
                arguments[0].contains("/")
                ? posix_spawn(&pid, arguments[0], &actions, &attributes.value, argv, envp)
                : posix_spawnp(&pid, arguments[0], &actions, &attributes.value, argv, envp)
            if status == 0 { table[pid] = arguments[0] }
            return status
        }
        guard status == 0 else {
            throw BenchFailure("cannot start \(arguments[0]): \(String(cString: strerror(status)))")
        }
        return pid
    }

    /// Whether `pid` has exited (reaped then).
    static func exited(_ pid: pid_t) -> Bool {
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        guard result == pid || (result < 0 && errno == ECHILD) else { return false }
        running.withLock { _ = $0.removeValue(forKey: pid) }
        return true
    }

    /// SIGTERM, up to `grace` seconds to exit, then SIGKILL; reaped either way.
    static func stop(_ pid: pid_t, grace: Double = 5) {
        guard running.withLock({ $0[pid] != nil }) else { return }
        kill(pid, SIGTERM)
        let deadline = Stopwatch()
        while deadline.seconds < grace {
            if exited(pid) { return }
            usleep(10_000)
        }
        kill(pid, SIGKILL)
        waitpid(pid, nil, 0)
        running.withLock { _ = $0.removeValue(forKey: pid) }
    }

    /// SIGKILL to every process still recorded, each reaped.
    static func killAll() {
        let pids = running.withLock { table in
            defer { table = [:] }
            return Array(table.keys)
        }
        for pid in pids { kill(pid, SIGKILL) }
        for pid in pids { waitpid(pid, nil, 0) }
    }
}

/// Spawn attributes that give a child an empty signal mask and default handlers: threads of Swift's runtime block
/// signals, and a child inheriting that mask would ignore the SIGTERM that stops it.
private struct SpawnAttributes {
    var value = posix_spawnattr_t()

    init() {
        posix_spawnattr_init(&value)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&value, &empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&value, &all)
        posix_spawnattr_setflags(&value, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    }

    mutating func destroy() { posix_spawnattr_destroy(&value) }
}

/// A failure that ends the run with a message.
struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Seconds since it was made (CLOCK_MONOTONIC).
struct Stopwatch {
    let start = Stopwatch.now()

    var seconds: Double { Double(Stopwatch.now() - start) / 1e9 }

    /// CLOCK_MONOTONIC in nanoseconds.
    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}

/// Sleeps `seconds` (blebench's own thread; nothing else runs on it).
func pause(_ seconds: Double) {
    guard seconds > 0 else { return }
    var spec = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
    var left = timespec()
    while nanosleep(&spec, &left) != 0 && errno == EINTR { spec = left }
}
