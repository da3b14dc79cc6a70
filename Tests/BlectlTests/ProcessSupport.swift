import BLETesting
import Glibc
import IO
import JSON
import Testing

/// A fresh directory under /tmp.
func makeTemporaryDirectory() -> String { TemporaryDirectory("bleagent-test").path }

func writeFile(_ path: String, _ text: String) {
    let fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0o644)
    _ = Array(text.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
}

func fileExists(_ path: String) -> Bool {
    var status = stat()
    return lstat(path, &status) == 0
}

/// A spawned child with its stdout and stderr read on the shared loop: the kit's ``TestProcess`` (its
/// environment exactly the one given), with this suite's call shapes. Every wait is awaited with a deadline.
final class Child: Sendable {
    let process: TestProcess

    var pid: pid_t { process.pid }

    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) async throws {
        process = try await TestProcess(executable, arguments, environment: environment, inheritEnvironment: false)
    }

    /// Closes the reading end of the child's stderr: its next write there fails with EPIPE (and
    /// raises SIGPIPE unless the child ignores it), as when a log reader goes away.
    func closeStandardError() { process.closeStandardError() }

    /// Sends `signal` while the child runs.
    func signal(_ signal: Int32) { process.signal(signal) }

    /// What stdout has shown so far.
    var stdoutText: String { process.outputText }

    /// What stderr has shown so far.
    var stderrText: String { process.errorText }

    /// Waits until stdout contains `text`; false (with an issue) when it ends or the deadline passes.
    func waitForStdout(containing text: String) async -> Bool { await process.waitForOutput(containing: text) }

    /// The next stdout line not looked at before that satisfies `accept`; nil (with an issue) when stdout ends
    /// or the deadline passes.
    func waitForStdoutLine(where accept: (String) -> Bool) async -> String? {
        let line = await process.waitForLine(where: accept)
        if line == nil { Issue.record("child \(pid) printed no awaited line within the deadline") }
        return line
    }

    /// Waits until stderr contains `text`; false (with an issue) when it ends or the deadline passes.
    func waitForStderr(containing text: String) async -> Bool { await process.waitForErrors(containing: text) }

    /// Waits until stderr holds `text` `occurrences` times.
    func waitForStderr(containing text: String, occurrences: Int) async -> Bool {
        await process.waitForErrors(containing: text, occurrences: occurrences)
    }

    /// Waits until stdout's text satisfies `done` (`what` names it in the issue).
    func waitForStdout(_ what: String, until done: @escaping @Sendable (String) -> Bool) async -> Bool {
        await process.waitForOutput(what, until: done)
    }

    /// Reads stdout and stderr to their end and waits for the exit; records an issue (and kills it) when it
    /// stays silent for `silence`.
    func finish(silence: Duration = testDeadline) async -> (status: Int32, stdout: String, stderr: String) {
        let result = await process.finish(silence: silence)
        return (result.status, result.output, result.errors)
    }
}

struct ChildError: Error, CustomStringConvertible {
    let description: String
}

/// Runs blectl to completion.
func blectl(
    _ arguments: [String], environment: [String: String] = [:]
) async throws -> (
    status: Int32, stdout: String, stderr: String
) {
    try await Child("\(buildDirectory)/blectl", arguments, environment: environment).finish()
}

/// A datagram socket at an abstract address standing in for systemd's NOTIFY_SOCKET.
typealias NotifyListener = DatagramListener

/// A running bleagent in a temporary directory, started with a NOTIFY_SOCKET
/// and ready once its READY=1 arrived.
final class RunningAgent {
    let directory: String
    /// Whether the directory is this agent's own (removed at the end) or the caller's.
    private let ownsDirectory: Bool
    let notify: NotifyListener
    let child: Child
    var configPath: String { "\(directory)/roles.json" }
    var socketPath: String { "\(directory)/run/control.sock" }
    /// The READY=1 message it sent at start-up.
    private(set) var readyMessage: String?

    /// Starts an agent with `config`, in a fresh directory or in `directory`
    /// (the caller's, kept: a later agent there finds its state).
    /// `environment` is added to the agent's (NOTIFY_SOCKET and nothing else); `arguments` follow `--config`.
    init(
        config: String = RunningAgent.config(role: "central"), directory existing: String? = nil,
        environment: [String: String] = [:], arguments: [String] = []
    ) async throws {
        directory = existing ?? makeTemporaryDirectory()
        ownsDirectory = existing == nil
        writeFile("\(directory)/roles.json", config)
        notify = try NotifyListener()
        child = try await Child(
            "\(buildDirectory)/bleagent", ["--config", "\(directory)/roles.json"] + arguments,
            environment: environment.merging(["NOTIFY_SOCKET": notify.address]) { $1 })
        readyMessage = await notify.next()
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

    func signal(_ number: Int32) { child.signal(number) }

    /// Stops it with SIGTERM and returns its exit status and stderr.
    func stop() async -> (status: Int32, stderr: String) {
        signal(SIGTERM)
        let result = await child.finish()
        return (result.status, result.stderr)
    }

    deinit {
        child.signal(SIGKILL)
        if ownsDirectory {
            let directory = self.directory
            BlockingPool.shared.submit { removeTree(directory) }
        }
    }
}
