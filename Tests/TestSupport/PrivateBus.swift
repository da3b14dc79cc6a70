import DBus
import Glibc

/// A private `dbus-daemon` for one test: a session-type bus listening in a fresh temporary directory, with the
/// `org.freedesktop.DBus.Debug.Stats` interface reachable. The daemon prints its address on a pipe once it
/// listens; `start()` waits for that line (an event, not a delay) and `stop()` kills and reaps the daemon.
public final class PrivateBus: Sendable {
    public let address: String
    public let directory: String
    private let pid: pid_t

    private init(address: String, directory: String, pid: pid_t) {
        self.address = address
        self.directory = directory
        self.pid = pid
    }

    public enum Failure: Error { case setup(String) }

    /// Starts a bus; `policy` is appended to the default policy (later rules win), for tests of
    /// a bus that refuses something, such as `<deny send_destination="org.bluez"/>`.
    public static func start(policy: String = "") throws -> PrivateBus {
        var template = Array("/tmp/bleagent-dbus-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Failure.setup("mkdtemp failed: \(errno)") }
        let directory = String(cString: made)
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:dir=\(directory)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
                \(policy)
              </policy>
            </busconfig>
            """
        let configPath = directory + "/bus.conf"
        guard let file = fopen(configPath, "w") else { throw Failure.setup("cannot write \(configPath)") }
        fputs(config, file)
        fclose(file)

        let fds = try spawnPipe()
        let nullFD = movedAside(open("/dev/null", O_WRONLY))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 3)
        posix_spawn_file_actions_adddup2(&actions, nullFD, 2)
        let arguments = ["dbus-daemon", "--config-file=\(configPath)", "--nofork", "--print-address=3"]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var attributes = SpawnAttributes()
        defer { attributes.destroy() }
        var pid: pid_t = 0
        let status = posix_spawnp(&pid, "dbus-daemon", &actions, &attributes.value, &argv, environ)
        close(fds[1])
        close(nullFD)
        guard status == 0 else {
            close(fds[0])
            throw Failure.setup("posix_spawn dbus-daemon failed: \(status)")
        }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = read(fds[0], &byte, 1)
            if count < 0, errno == EINTR { continue }
            guard count == 1, byte != UInt8(ascii: "\n") else { break }
            line.append(byte)
        }
        close(fds[0])
        guard !line.isEmpty else {
            kill(pid, SIGKILL)
            waitpid(pid, nil, 0)
            throw Failure.setup("dbus-daemon printed no address")
        }
        return PrivateBus(address: String(decoding: line, as: UTF8.self), directory: directory, pid: pid)
    }

    /// Kills the daemon (every client sees its connection drop) and removes the directory.
    public func stop() {
        kill(pid, SIGKILL)
        waitpid(pid, nil, 0)
        if let dir = opendir(directory) {
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) {
                    String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
                }
                if name != "." && name != ".." { unlink(directory + "/" + name) }
            }
            closedir(dir)
        }
        rmdir(directory)
    }

    public func connect() async throws -> DBusConnection {
        try await DBusConnection.connect(address: address)
    }

    /// Runs `body` with a fresh bus, always stopping it afterwards.
    public static func with<T>(
        policy: String = "", _ body: (PrivateBus) async throws -> T
    ) async throws -> T {
        let bus = try await offPool { try PrivateBus.start(policy: policy) }
        defer { bus.stop() }
        return try await body(bus)
    }

    /// `GetConnectionStats(name)["MatchRules"]` from the daemon's Stats interface: the match rules the bus holds
    /// for that connection.
    public func matchRuleCount(of name: String, using connection: DBusConnection) async throws -> UInt32 {
        let reply = try await connection.call(
            destination: "org.freedesktop.DBus", path: try ObjectPath("/org/freedesktop/DBus"),
            interface: "org.freedesktop.DBus.Debug.Stats", member: "GetConnectionStats", arguments: [.string(name)])
        let stats = try reply.decode([String: DBusValue].self)
        return try stats["MatchRules"]?.decode(UInt32.self) ?? 0
    }
}

/// Runs blocking work (spawning processes, reading their pipes) on a thread of its own, so that tests running in
/// parallel never tie up the few threads of Swift's cooperative pool that D-Bus handlers need.
public func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        let job = OffPoolJob { continuation.resume(with: Result { try body() }) }
        let box = Unmanaged.passRetained(job).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(
            &thread, nil,
            { argument in
                guard let argument else { return nil }
                Unmanaged<OffPoolJob>.fromOpaque(argument).takeRetainedValue().run()
                return nil
            }, box)
        if status == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<OffPoolJob>.fromOpaque(box).release()
            continuation.resume(throwing: PrivateBus.Failure.setup("pthread_create failed"))
        }
    }
}

private final class OffPoolJob: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}

/// Runs a command line off the cooperative pool and returns its output and exit status.
public func tool(_ arguments: [String]) async throws -> (output: String, status: Int32) {
    try await offPool { try runTool(arguments) }
}

/// Runs a command line and returns its standard output and exit status (used to check our objects with the
/// reference tools `busctl` and `dbus-send`).
public func runTool(_ arguments: [String]) throws -> (output: String, status: Int32) {
    let fds = try spawnPipe()
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
    posix_spawn_file_actions_adddup2(&actions, fds[1], 2)
    var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var attributes = SpawnAttributes()
    defer { attributes.destroy() }
    var pid: pid_t = 0
    let spawned = posix_spawnp(&pid, arguments[0], &actions, &attributes.value, &argv, environ)
    close(fds[1])
    guard spawned == 0 else {
        close(fds[0])
        throw PrivateBus.Failure.setup("cannot run \(arguments[0])")
    }
    var output: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = read(fds[0], &buffer, buffer.count)
        if count < 0, errno == EINTR { continue }
        if count <= 0 { break }
        output.append(contentsOf: buffer[0..<count])
    }
    close(fds[0])
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    return (String(decoding: output, as: UTF8.self), (status >> 8) & 0xff)
}

/// Spawn attributes that give the child an empty signal mask and default handlers: threads of Swift's runtime block
/// signals, and a child inheriting that mask would ignore the SIGTERM that stops it.
public struct SpawnAttributes {
    /// The attributes, for posix_spawn.
    public var value = posix_spawnattr_t()

    /// Children start with an empty signal mask and default dispositions.
    public init() {
        posix_spawnattr_init(&value)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&value, &empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&value, &all)
        posix_spawnattr_setflags(&value, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    }

    /// Releases the attributes.
    public mutating func destroy() { posix_spawnattr_destroy(&value) }
}

/// A pipe whose ends are close-on-exec and numbered 10 or above, so that tests spawning processes in parallel
/// neither leak them into each other's children nor collide with the descriptors 1 to 3 being set up for a child.
public func spawnPipe() throws -> [Int32] {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { throw PrivateBus.Failure.setup("pipe failed") }
    return fds.map(movedAside)
}

/// `fd` duplicated to a close-on-exec descriptor numbered 10 or above (the original is closed).
public func movedAside(_ fd: Int32) -> Int32 {
    let moved = fcntl(fd, F_DUPFD_CLOEXEC, 10)
    close(fd)
    return moved
}
