import IO
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// How long a test waits for something that should happen at once: generous, so a loaded machine is slow, not red.
public let testDeadline = Duration.seconds(30)

/// The test process ignores SIGPIPE, as the agent does (`bleagent`'s main): a write to a pipe whose reader is gone
/// (a child that exited while the test wrote to its standard input, an in-process server's client that left) fails
/// with EPIPE instead of killing every test in the process. Children get the default back (``ChildProcess``).
let brokenPipesIgnored: Void = { signal(SIGPIPE, SIG_IGN) }()

/// A process a test starts: the core's ``ChildProcess`` (forked from the shared loop's thread, with SIGTERM as its
/// parent-death signal, reaped on the loop) with its standard output and error read on the loop as they arrive.
/// Every wait is an event with a deadline, awaited; nothing blocks a thread of the cooperative pool.
public final class TestProcess: Sendable {
    /// The process.
    public let process: ChildProcess
    private let output: OutputCollector
    private let errors: OutputCollector
    private let input: Mutex<FileDescriptor?>
    /// Bytes of standard output already returned as lines by ``readLine(within:)``.
    private let consumed = Mutex(0)

    /// The process id.
    public var pid: Int32 { process.pid }

    /// Starts `executable` (a path, or a name looked up in `PATH`) with `arguments`. The child's environment is
    /// `environment` on top of this process's, or `environment` alone without `inheritEnvironment`; with `input`
    /// its standard input is a pipe for ``send(_:)``.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:],
        inheritEnvironment: Bool = true, input: Bool = false
    ) async throws {
        brokenPipesIgnored
        var entries = inheritEnvironment ? ChildProcess.currentEnvironment() : []
        if !environment.isEmpty {
            entries.removeAll { entry in environment.keys.contains { entry.hasPrefix("\($0)=") } }
            entries += environment.map { "\($0.key)=\($0.value)" }
        }
        process = try await ChildProcess.spawn(
            executable, arguments, environment: entries, standardInput: input ? .pipe : .null,
            standardOutput: .collect(limit: 64 << 20), standardError: .collect(limit: 64 << 20),
            deathSignal: SIGTERM)
        guard let output = process.standardOutput, let errors = process.standardError else {
            throw SystemError("spawn", path: executable, errno: .badFileDescriptor, detail: "no output pipes")
        }
        self.output = output
        self.errors = errors
        self.input = Mutex(process.standardInput)
    }

    deinit { closeInput() }

    /// Standard output so far.
    public var outputText: String { output.text }
    /// Standard error so far.
    public var errorText: String { errors.text }

    /// Waits until standard output contains `text`; `false` (with an issue) when it ends or the deadline passes.
    @discardableResult
    public func waitForOutput(containing text: String, within deadline: Duration = testDeadline) async -> Bool {
        await wait(for: output, "\"\(text)\" on standard output", deadline) { $0.contains(text) }
    }

    /// Waits until standard output's text satisfies `done` (`what` names it in the issue); `false` (with an issue)
    /// when the output ends or the deadline passes.
    @discardableResult
    public func waitForOutput(
        _ what: String, within deadline: Duration = testDeadline, until done: @escaping @Sendable (String) -> Bool
    ) async -> Bool {
        await wait(for: output, what, deadline, done)
    }

    /// Waits until standard error contains `text` `occurrences` times; `false` (with an issue) when it ends or the
    /// deadline passes.
    @discardableResult
    public func waitForErrors(
        containing text: String, occurrences: Int = 1, within deadline: Duration = testDeadline
    ) async -> Bool {
        await wait(for: errors, "\"\(text)\" \(occurrences)x on standard error", deadline) {
            $0.ranges(of: text).count >= occurrences
        }
    }

    private func wait(
        for collector: OutputCollector, _ what: String, _ deadline: Duration,
        _ done: @escaping @Sendable (String) -> Bool
    ) async -> Bool {
        if await collector.wait(timeout: deadline, until: { done(String(decoding: $0, as: UTF8.self)) }) {
            return true
        }
        Issue.record("process \(pid) did not print \(what) within \(deadline)")
        return false
    }

    /// The next line of standard output not returned before; `nil` when the output ends or `deadline` passes.
    public func readLine(within deadline: Duration = testDeadline) async -> String? {
        let start = consumed.withLock { $0 }
        let found = await output.wait(timeout: deadline) { bytes in
            start <= bytes.count && bytes[start...].contains(UInt8(ascii: "\n"))
        }
        guard found else { return nil }
        let bytes = output.bytes
        guard let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        consumed.withLock { $0 = newline + 1 }
        return String(decoding: bytes[start..<newline], as: UTF8.self)
    }

    /// Reads lines until one satisfies `accept` and returns it; `nil` when the output ends or `deadline` passes.
    public func waitForLine(
        within deadline: Duration = testDeadline, where accept: (String) -> Bool
    ) async -> String? {
        let end = ContinuousClock.now.advanced(by: deadline)
        while ContinuousClock.now < end {
            guard let line = await readLine(within: ContinuousClock.now.duration(to: end)) else { return nil }
            if accept(line) { return line }
        }
        return nil
    }

    /// Writes `line` and a newline to standard input (a pipe: the child reads it).
    public func send(_ line: String) {
        input.withLock { fd in try? fd?.writeAll(Array((line + "\n").utf8)) }
    }

    /// Closes standard input (the child reads its end).
    public func closeInput() {
        input.withLock { fd in
            fd?.close()
            fd = nil
        }
    }

    /// Closes the reading end of standard error: the child's next write there fails with EPIPE (and raises
    /// SIGPIPE unless it ignores it), as when a log reader goes away.
    public func closeStandardError() { errors.close() }

    /// Sends `signal` (through the pidfd) while the process runs.
    public func signal(_ signal: Int32) { process.signal(signal) }

    /// Reads standard output and error to their end (the process exited or closed them) and waits for the exit:
    /// the shell's status (128 plus the signal for a killed process), the output and the errors. A process silent
    /// for `silence` is recorded as an issue and killed.
    public func finish(silence: Duration = testDeadline) async -> (status: Int32, output: String, errors: String) {
        for collector in [output, errors] {
            while !collector.isFinished {
                let seen = collector.bytes.count
                let moved = await collector.wait(timeout: silence) { $0.count > seen }
                if !moved && !collector.isFinished {
                    Issue.record("process \(pid) was silent for \(silence) without finishing")
                    process.signal(SIGKILL)
                    break
                }
            }
        }
        let status = await process.wait()
        return (status.shellStatus, output.text, errors.text)
    }

    /// SIGTERM, SIGKILL after `grace`, and the exit awaited.
    @discardableResult
    public func terminate(within grace: Duration = .seconds(10)) async -> ChildProcess.ExitStatus {
        await process.terminate(within: grace)
    }
}
