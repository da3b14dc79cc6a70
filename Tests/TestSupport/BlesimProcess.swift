import Glibc

/// The built blesim binary (`.build/debug/blesim`, or `$BLESIM`) serving on a
/// private bus; ready once it printed its `blesim: ready` line (read on its
/// pipe, off the cooperative pool: an event, not a delay).
public final class BlesimProcess: Sendable {
    /// The repository this file is in.
    public static let repositoryRoot: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }()
    /// The small scenario of Tests/BlesimTests/Fixtures.
    public static let airScenario = repositoryRoot + "/Tests/BlesimTests/Fixtures/air.json"
    /// The blesim binary: `$BLESIM`, else the debug build.
    public static var executable: String {
        getenv("BLESIM").map { String(cString: $0) } ?? repositoryRoot + "/.build/debug/blesim"
    }

    /// blesim's process id.
    public let pid: pid_t
    /// blesim's standard output, kept open so that later lines never meet a closed pipe.
    private let output: Int32

    private init(pid: pid_t, output: Int32) {
        self.pid = pid
        self.output = output
    }

    /// Starts blesim on `address` with `scenario` (and `options`, such as
    /// `--extended-advertising`) and waits for it to be ready.
    public static func start(
        address: String, scenario: String = airScenario, options: [String] = []
    ) async throws -> BlesimProcess {
        try await offPool {
            guard access(executable, X_OK) == 0 else {
                throw PrivateBus.Failure.setup("no blesim at \(executable): run `swift build` first")
            }
            let fds = try spawnPipe()
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
            let arguments = [executable, "--address", address, "--scenario", scenario] + options
            var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
            defer { for pointer in argv { free(pointer) } }
            var attributes = SpawnAttributes()
            defer { attributes.destroy() }
            var pid: pid_t = 0
            let status = posix_spawn(&pid, executable, &actions, &attributes.value, &argv, environ)
            close(fds[1])
            guard status == 0 else {
                close(fds[0])
                throw PrivateBus.Failure.setup("cannot start blesim: \(status)")
            }
            var line: [UInt8] = []
            var byte: UInt8 = 0
            while read(fds[0], &byte, 1) == 1 {
                if byte == UInt8(ascii: "\n") {
                    if String(decoding: line, as: UTF8.self).hasPrefix("blesim: ready") { break }
                    line = []
                } else {
                    line.append(byte)
                }
            }
            guard String(decoding: line, as: UTF8.self).hasPrefix("blesim: ready") else {
                close(fds[0])
                Glibc.kill(pid, SIGKILL)
                waitpid(pid, nil, 0)
                throw PrivateBus.Failure.setup("blesim did not become ready")
            }
            return BlesimProcess(pid: pid, output: fds[0])
        }
    }

    /// Kills blesim (SIGKILL, as a crash) and reaps it.
    public func kill() {
        Glibc.kill(pid, SIGKILL)
        waitpid(pid, nil, 0)
        close(output)
    }

    /// Stops blesim (SIGKILL) and reaps it; the same as ``kill()``.
    public func stop() { kill() }
}
