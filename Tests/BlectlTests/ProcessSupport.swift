import Glibc
import JSON
import TestSupport
import Testing

/// How long a test waits for something that should happen at once.
let deadlineMilliseconds: Int32 = 20_000

/// The directory holding the built binaries: the test bundle's own directory.
let buildDirectory: String = {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    let path = String(decoding: buffer[..<max(0, count)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
}()

/// A fresh directory under /tmp.
func makeTemporaryDirectory() -> String {
    var template = Array("/tmp/bleagent-test-XXXXXX".utf8CString)
    _ = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

func writeFile(_ path: String, _ text: String) {
    let fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0o644)
    _ = Array(text.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
}

func fileExists(_ path: String) -> Bool {
    var status = stat()
    return lstat(path, &status) == 0
}

/// A spawned child with its stdout and stderr on pipes.
final class Child {
    let pid: pid_t
    private let stdoutFD: Int32
    private var stderrFD: Int32
    private var stderrSoFar: [UInt8] = []

    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        var outPipe: [Int32] = [0, 0]
        var errPipe: [Int32] = [0, 0]
        guard pipe(&outPipe) == 0, pipe(&errPipe) == 0 else { throw ChildError(description: "pipe failed") }
        for fd in outPipe + errPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        var pid: pid_t = 0
        // An empty signal mask and default handlers: the test process's threads block signals, and a
        // child inheriting that mask would never see the SIGINT or SIGTERM a test sends it.
        var attributes = SpawnAttributes()
        let result = posix_spawn(&pid, executable, &actions, &attributes.value, argv, envp)
        attributes.destroy()
        posix_spawn_file_actions_destroy(&actions)
        for pointer in argv + envp { free(pointer) }
        close(outPipe[1])
        close(errPipe[1])
        guard result == 0 else { throw ChildError(description: "posix_spawn \(executable): \(result)") }
        self.pid = pid
        stdoutFD = outPipe[0]
        stderrFD = errPipe[0]
    }

    deinit {
        close(stdoutFD)
        if stderrFD >= 0 { close(stderrFD) }
    }

    /// Closes the reading end of the child's stderr: its next write there fails with EPIPE (and
    /// raises SIGPIPE unless the child ignores it), as when a log reader goes away.
    func closeStandardError() {
        if stderrFD >= 0 { close(stderrFD) }
        stderrFD = -1
    }

    private var stdoutSoFar: [UInt8] = []

    /// What stdout has shown so far (read by ``waitForStdout(containing:)``).
    var stdoutText: String { String(decoding: stdoutSoFar, as: UTF8.self) }

    /// What stderr has shown so far (read by ``waitForStderr(containing:)``).
    var stderrText: String { String(decoding: stderrSoFar, as: UTF8.self) }

    /// Reads stdout until it contains `text` (or ends, or the deadline passes).
    func waitForStdout(containing text: String) -> Bool {
        wait(on: stdoutFD, into: &stdoutSoFar, for: "\"\(text)\"") { $0.contains(text) }
    }

    /// How many whole stdout lines ``waitForStdoutLine(where:)`` has looked at.
    private var stdoutLinesSeen = 0

    /// Reads stdout until a line not looked at before satisfies `accept`, and
    /// returns it; nil (with an issue) when stdout ends or the deadline passes.
    func waitForStdoutLine(where accept: (String) -> Bool) -> String? {
        while true {
            let lines = String(decoding: stdoutSoFar, as: UTF8.self).split(
                separator: "\n", omittingEmptySubsequences: false
            ).dropLast()
            while stdoutLinesSeen < lines.count {
                let line = String(lines[lines.startIndex + stdoutLinesSeen])
                stdoutLinesSeen += 1
                if accept(line) { return line }
            }
            var poller = pollfd(fd: stdoutFD, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, deadlineMilliseconds) == 1 else {
                Issue.record("child \(pid) printed no awaited line within the deadline")
                return nil
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(stdoutFD, &chunk, chunk.count)
            if count <= 0 { return nil }
            stdoutSoFar += chunk[..<count]
        }
    }

    /// Reads stdout until its text satisfies `done` (or it ends, or the deadline passes).
    func waitForStdout(_ what: String, until done: (String) -> Bool) -> Bool {
        wait(on: stdoutFD, into: &stdoutSoFar, for: what, until: done)
    }

    /// Reads stderr until it contains `text` (or ends, or the deadline passes).
    func waitForStderr(containing text: String) -> Bool {
        wait(on: stderrFD, into: &stderrSoFar, for: "\"\(text)\"") { $0.contains(text) }
    }

    /// Reads stderr until `text` occurs `occurrences` times (or it ends, or the deadline passes).
    func waitForStderr(containing text: String, occurrences: Int) -> Bool {
        wait(on: stderrFD, into: &stderrSoFar, for: "\"\(text)\" \(occurrences) times") {
            $0.ranges(of: text).count >= occurrences
        }
    }

    /// Reads `fd` into `output` until `done` holds for its text. The deadline
    /// bounds the whole wait, not each read: a child that keeps printing
    /// other lines cannot keep a test waiting forever.
    private func wait(
        on fd: Int32, into output: inout [UInt8], for what: String, until done: (String) -> Bool
    ) -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int64(deadlineMilliseconds))
        while !done(String(decoding: output, as: UTF8.self)) {
            let left = deadline - ContinuousClock.now
            let milliseconds = Int32(
                clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard milliseconds > 0, poll(&poller, 1, milliseconds) == 1 else {
                Issue.record("child \(pid) did not print \(what) within the deadline")
                return false
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(fd, &chunk, chunk.count)
            if count <= 0 { return false }
            output += chunk[..<count]
        }
        return true
    }

    /// Reads stdout and stderr to their end (the child exited or closed
    /// them), then reaps the child; records an issue (and kills it) when it
    /// stays silent for `silence` milliseconds.
    func finish(silence: Int32 = deadlineMilliseconds) -> (status: Int32, stdout: String, stderr: String) {
        var outputs: [Int32: [UInt8]] = [stdoutFD: [], stderrFD: stderrSoFar]
        var open: Set<Int32> = stderrFD >= 0 ? [stdoutFD, stderrFD] : [stdoutFD]
        while !open.isEmpty {
            var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            guard poll(&fds, nfds_t(fds.count), silence) > 0 else {
                Issue.record("child \(pid) did not finish within the deadline")
                kill(pid, SIGKILL)
                break
            }
            for entry in fds where entry.revents != 0 {
                var chunk = [UInt8](repeating: 0, count: 65536)
                let count = read(entry.fd, &chunk, chunk.count)
                if count <= 0 { open.remove(entry.fd) } else { outputs[entry.fd]! += chunk[..<count] }
            }
        }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        let exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return (
            exitStatus, String(decoding: outputs[stdoutFD]!, as: UTF8.self),
            String(decoding: outputs[stderrFD]!, as: UTF8.self)
        )
    }
}

struct ChildError: Error, CustomStringConvertible {
    let description: String
}

/// Runs blectl to completion.
func blectl(
    _ arguments: [String], environment: [String: String] = [:]
) throws -> (
    status: Int32, stdout: String, stderr: String
) {
    try Child("\(buildDirectory)/blectl", arguments, environment: environment).finish()
}

/// A datagram socket at an abstract address standing in for systemd's NOTIFY_SOCKET.
final class NotifyListener {
    let fd: Int32
    /// The NOTIFY_SOCKET value ("@name").
    let address: String

    init() {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        address = "@bleagent-test-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        var sockaddr = sockaddr_un()
        sockaddr.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(address.utf8)
        bytes[0] = 0
        withUnsafeMutableBytes(of: &sockaddr.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        _ = withUnsafePointer(to: &sockaddr) {
            $0.withMemoryRebound(to: Glibc.sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
    }

    deinit { close(fd) }

    /// The next datagram's text; `nil` (with an issue) past the deadline.
    func next() -> String? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, deadlineMilliseconds) == 1 else {
            Issue.record("no sd_notify message within the deadline")
            return nil
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        return String(decoding: buffer[..<max(0, count)], as: UTF8.self)
    }
}

/// A running bleagent in a temporary directory, started with a NOTIFY_SOCKET
/// and ready once its READY=1 arrived.
final class RunningAgent {
    let directory: String
    /// Whether the directory is this agent's own (removed at the end) or the caller's.
    private let ownsDirectory: Bool
    let notify = NotifyListener()
    let child: Child
    var configPath: String { "\(directory)/roles.json" }
    var socketPath: String { "\(directory)/run/control.sock" }
    /// The READY=1 message it sent at start-up.
    private(set) var readyMessage: String?

    /// Starts an agent with `config`, in a fresh directory or in `directory`
    /// (the caller's, kept: a later agent there finds its state).
    init(
        config: String = RunningAgent.config(role: "central"), directory existing: String? = nil,
        arguments: [String] = []
    ) throws {
        directory = existing ?? makeTemporaryDirectory()
        ownsDirectory = existing == nil
        writeFile("\(directory)/roles.json", config)
        child = try Child(
            "\(buildDirectory)/bleagent", ["--config", "\(directory)/roles.json"] + arguments,
            environment: ["NOTIFY_SOCKET": notify.address])
        readyMessage = notify.next()
    }

    /// A config in the agent's directory. By default the plugins are the
    /// real role plugins named in a directory that does not exist, so the role
    /// fails to load and the agent lives on; `plugins` names other plugins
    /// (`central`, `peripheral`) loaded from the build directory.
    static func config(role: String, extra: String = "", plugins: (String, String)? = nil) -> String {
        let directory = plugins == nil ? "plugins" : buildDirectory
        let (central, peripheral) = plugins ?? ("PaymentTerminalScanner", "SensorAggregator")
        return """
            {
              "version": 1,
              "role": "\(role)",
              "backend": "sim",
              "control": { "socket": "run/control.sock"\(extra) },
              "restore": { "stateDirectory": "state" },
              "pluginDirectory": "\(directory)",
              "sim": { "scenario": "\(repositoryRoot)/sim/scenarios/default.json" },
              "roles": {
                "central": { "plugin": "\(central)", "config": { "heartbeatSeconds": 0 } },
                "peripheral": { "plugin": "\(peripheral)" }
              }
            }
            """
    }

    func signal(_ number: Int32) { kill(child.pid, number) }

    /// Stops it with SIGTERM and returns its exit status and stderr.
    func stop() -> (status: Int32, stderr: String) {
        signal(SIGTERM)
        let result = child.finish()
        return (result.status, result.stderr)
    }

    deinit {
        kill(child.pid, SIGKILL)
        if ownsDirectory { _ = "rm -rf '\(directory)'".withCString { system($0) } }
    }
}
