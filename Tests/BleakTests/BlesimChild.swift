import Glibc
import TestSupport

/// The built blesim binary (`.build/debug/blesim`, or `$BLESIM`) serving a scenario on a private bus; ready once
/// it printed its `blesim: ready` line, read on its pipe off the cooperative pool (an event, not a delay).
final class BlesimChild: Sendable {
    static var executable: String {
        getenv("BLESIM").map { String(cString: $0) } ?? repositoryRoot + "/.build/debug/blesim"
    }

    let pid: pid_t
    /// blesim's standard output, kept open so that later lines never meet a closed pipe.
    private let output: Int32

    private init(pid: pid_t, output: Int32) {
        self.pid = pid
        self.output = output
    }

    /// Starts blesim on `address` with `scenario` and waits for its ready line.
    static func start(address: String, scenario: String) async throws -> BlesimChild {
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
            let arguments = [executable, "--address", address, "--scenario", scenario]
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
            var ready = false
            while read(fds[0], &byte, 1) == 1 {
                guard byte == UInt8(ascii: "\n") else {
                    line.append(byte)
                    continue
                }
                if String(decoding: line, as: UTF8.self).hasPrefix("blesim: ready") {
                    ready = true
                    break
                }
                line = []
            }
            guard ready else {
                close(fds[0])
                Glibc.kill(pid, SIGKILL)
                waitpid(pid, nil, 0)
                throw PrivateBus.Failure.setup("blesim did not become ready")
            }
            return BlesimChild(pid: pid, output: fds[0])
        }
    }

    /// Stops blesim (SIGTERM) and reaps it.
    func stop() {
        Glibc.kill(pid, SIGTERM)
        waitpid(pid, nil, 0)
        close(output)
    }
}

/// The repository's root, from this file's path (Tests/BleakTests/...).
let repositoryRoot: String = {
    var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(3)
    return parts.joined(separator: "/")
}()
