import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Something the harness could not do, said plainly.
struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The repository root, found from this file's path.
let repositoryRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
}()

/// A child process whose standard output is read line by line, with deadlines. Spawned and
/// reaped with posix_spawn/waitpid directly (Foundation's Process can hang in waitUntilExit
/// when the cooperative pool is busy).
final class ChildProcess {
    let pid: pid_t
    private let outputFD: Int32
    private let errorsPath: String
    private var buffer: [UInt8] = []
    private(set) var transcript = ""
    private var status: Int32?
    /// The write end of the child's standard input, when it was started with `input: true`.
    private var inputFD: Int32 = -1

    init(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], input: Bool = false
    ) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw HarnessError("pipe failed") }
        var inputs: [Int32] = [-1, -1]
        if input {
            guard pipe(&inputs) == 0 else { throw HarnessError("pipe failed") }
        }
        errorsPath = "/tmp/blesim-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).err"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        if input {
            posix_spawn_file_actions_adddup2(&actions, inputs[0], 0)
            posix_spawn_file_actions_addclose(&actions, inputs[0])
            posix_spawn_file_actions_addclose(&actions, inputs[1])
        }
        posix_spawn_file_actions_addopen(&actions, 2, errorsPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        posix_spawn_file_actions_addclose(&actions, fds[1])
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        close(fds[1])
        if input {
            close(inputs[0])
            inputFD = inputs[1]
            _ = fcntl(inputFD, F_SETFD, FD_CLOEXEC)
        }
        guard result == 0 else {
            close(fds[0])
            throw HarnessError("cannot start \(executable): \(String(cString: strerror(result)))")
        }
        pid = child
        outputFD = fds[0]
        _ = fcntl(outputFD, F_SETFD, FD_CLOEXEC)
    }

    /// The next line of standard output, waiting at most `seconds` (on the pipe, not a sleep).
    func readLine(within seconds: Double) throws -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                transcript += line + "\n"
                return line
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return nil }
            var request = pollfd(fd: outputFD, events: Int16(POLLIN), revents: 0)
            let ready = poll(&request, 1, Int32(min(remaining * 1000, 60_000)))
            if ready <= 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(outputFD, &chunk, chunk.count)
            if count <= 0 { return nil }
            buffer += chunk[0..<count]
        }
    }

    /// Reads lines until one satisfies `predicate`; nil when the deadline passes first.
    func waitForLine(within seconds: Double, where predicate: (String) -> Bool) throws -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        while deadline.timeIntervalSinceNow > 0 {
            guard let line = try readLine(within: deadline.timeIntervalSinceNow) else { return nil }
            if predicate(line) { return line }
        }
        return nil
    }

    /// Writes `line` and a newline to the child's standard input.
    func send(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(inputFD, $0.baseAddress, $0.count) }
    }

    /// Closes the child's standard input (end of file).
    func closeInput() {
        if inputFD >= 0 { close(inputFD) }
        inputFD = -1
    }

    /// Waits for the process to exit; returns its status, all its output and its standard error.
    func finish() -> (status: Int32, output: String, errors: String) {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(outputFD, &chunk, chunk.count)
            if count <= 0 { break }
            buffer += chunk[0..<count]
        }
        let code = reap()
        let errors = (try? String(contentsOfFile: errorsPath, encoding: .utf8)) ?? ""
        return (code, transcript + String(decoding: buffer, as: UTF8.self), errors)
    }

    private func reap() -> Int32 {
        if let status { return status }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        let code = (raw & 0x7F) == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
        status = code
        return code
    }

    /// Stops the process (SIGTERM) and reaps it.
    func terminate() {
        guard status == nil else { return }
        kill(pid, SIGTERM)
        _ = reap()
    }

    deinit {
        closeInput()
        terminate()
        close(outputFD)
        unlink(errorsPath)
    }
}

/// A private dbus-daemon (session configuration: no policy in the way), stopped on deinit.
final class PrivateBus {
    let daemon: ChildProcess
    let address: String

    init() throws {
        daemon = try ChildProcess(
            "/usr/bin/dbus-daemon", ["--session", "--nofork", "--print-address=1", "--address=unix:tmpdir=/tmp"])
        guard let line = try daemon.readLine(within: 30), line.hasPrefix("unix:") else {
            throw HarnessError("dbus-daemon did not print its address")
        }
        address = line
    }
}

/// The built blesim binary serving on `bus`; ready once it printed its ready line.
final class Blesim {
    let child: ChildProcess

    static var executable: String {
        ProcessInfo.processInfo.environment["BLESIM"] ?? repositoryRoot + "/.build/debug/blesim"
    }

    init(bus: PrivateBus, arguments: [String] = []) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw HarnessError("no blesim binary at \(Self.executable): run `swift build` first")
        }
        child = try ChildProcess(Self.executable, ["--address", bus.address] + arguments)
        guard try child.waitForLine(within: 60, where: { $0.hasPrefix("blesim: ready") }) != nil else {
            child.terminate()
            throw HarnessError("blesim did not become ready: \(child.finish())")
        }
    }
}
