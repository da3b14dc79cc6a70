import Glibc
import Synchronization

/// An exclusive lock on a directory an agent owns (its state directory, the
/// embedded simulator's runtime directory), held for as long as this value
/// lives: a POSIX record lock (`fcntl(F_SETLK)`) on `<directory>/bleagent.lock`,
/// which the kernel releases when the process ends, however it ends. A
/// second agent asking for the same directory learns the holder's pid from
/// the kernel (`F_GETLK`); the file also holds that pid as text for people.
///
/// The lock file is opened once and never again by this process (closing
/// any descriptor of it would drop a POSIX lock).
public final class DirectoryLock: Sendable {
    /// The directory locked.
    public let directory: String
    private let fd: Int32

    private init(directory: String, fd: Int32) {
        self.directory = directory
        self.fd = fd
    }

    deinit { close(fd) }

    /// The lock file's name inside the directory.
    public static let fileName = "bleagent.lock"

    /// Creates `directory` (and missing parents, mode 0700) if needed and
    /// locks it; `field` names it in errors (`restore.stateDirectory`).
    public static func acquire(_ directory: String, field: String) throws(DirectoryLockError) -> DirectoryLock {
        try makeDirectories(directory)
        let path = "\(directory)/\(fileName)"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { throw .system("open \(path)", errno: errno) }
        for _ in 0..<3 {
            var lock = flock()
            lock.l_type = Int16(F_WRLCK)
            lock.l_whence = Int16(SEEK_SET)
            if fcntl(fd, F_SETLK, &lock) == 0 {
                let pid = Array("\(getpid())\n".utf8)
                _ = ftruncate(fd, 0)
                _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
                return DirectoryLock(directory: directory, fd: fd)
            }
            guard errno == EAGAIN || errno == EACCES else {
                let code = errno
                close(fd)
                throw .system("lock \(path)", errno: code)
            }
            var probe = flock()
            probe.l_type = Int16(F_WRLCK)
            probe.l_whence = Int16(SEEK_SET)
            // The holder may exit between the two calls: then try again.
            if fcntl(fd, F_GETLK, &probe) == 0, probe.l_type != Int16(F_UNLCK) {
                close(fd)
                throw .held(directory: directory, field: field, pid: probe.l_pid)
            }
        }
        close(fd)
        throw .held(directory: directory, field: field, pid: 0)
    }

    private static func makeDirectories(_ directory: String) throws(DirectoryLockError) {
        var path = ""
        for component in directory.split(separator: "/") {
            path += "/\(component)"
            if mkdir(path, 0o700) != 0 && errno != EEXIST { throw .system("mkdir \(path)", errno: errno) }
        }
    }
}

/// Why a directory could not be locked.
public enum DirectoryLockError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Another process holds it.
    case held(directory: String, field: String, pid: Int32)
    /// A system call failed.
    case system(String, errno: Int32)

    /// One sentence naming the directory and the holder.
    public var description: String {
        switch self {
        case .held(let directory, let field, let pid):
            "another bleagent (pid \(pid)) uses \(directory) (\(field)); one agent per directory: "
                + "give this one its own \(field) or stop the other"
        case .system(let operation, let code): "\(operation): \(String(cString: strerror(code)))"
        }
    }
}

/// The directory locks the running config needs: its state directory
/// always, the simulator's runtime directory while the backend is `sim`.
/// A reload that moves either takes the new lock first and drops the old
/// one only once it has it.
public final class AgentLocks: Sendable {
    private struct Held {
        var state: DirectoryLock?
        var runtime: DirectoryLock?
    }

    private let held = Mutex(Held())

    /// No locks yet.
    public init() {}

    /// Takes the locks `config` needs; on failure keeps the ones held and
    /// throws the first problem.
    public func update(for config: AgentConfig) throws(DirectoryLockError) {
        let (state, runtime) = held.withLock { ($0.state, $0.runtime) }
        let newState = try Self.lock(config.restore.stateDirectory, field: "restore.stateDirectory", keeping: state)
        var newRuntime: DirectoryLock?
        if config.backend == .sim {
            // One lock file is opened once: closing a second descriptor of it would drop the lock.
            newRuntime =
                config.sim.runtimeDirectory == newState.directory
                ? newState
                : try Self.lock(config.sim.runtimeDirectory, field: "sim.runtimeDirectory", keeping: runtime)
        }
        held.withLock { $0 = Held(state: newState, runtime: newRuntime) }
    }

    /// The same lock if it already covers `directory`, else a new one.
    private static func lock(
        _ directory: String, field: String, keeping current: DirectoryLock?
    ) throws(DirectoryLockError) -> DirectoryLock {
        if let current, current.directory == directory { return current }
        return try DirectoryLock.acquire(directory, field: field)
    }
}
