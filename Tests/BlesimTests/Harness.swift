import Foundation
import TestSupport

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

/// A child process whose standard output is read line by line, with deadlines: TestSupport's ``TestProcess``
/// (started from the shared loop's thread, read and reaped on that loop), with this suite's call shapes.
final class ChildProcess: Sendable {
    let process: TestProcess
    var pid: pid_t { process.pid }
    /// Standard output so far.
    var transcript: String { process.outputText }

    init(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], input: Bool = false
    ) async throws {
        process = try await TestProcess(executable, arguments, environment: environment, input: input)
    }

    /// The next line of standard output, waiting at most `seconds` (on the loop, not a sleep).
    func readLine(within seconds: Double) async throws -> String? {
        await process.readLine(within: .milliseconds(Int64(seconds * 1000)))
    }

    /// Reads lines until one satisfies `predicate`; nil when the deadline passes first.
    func waitForLine(within seconds: Double, where predicate: (String) -> Bool) async throws -> String? {
        await process.waitForLine(within: .milliseconds(Int64(seconds * 1000)), where: predicate)
    }

    /// Writes `line` and a newline to the child's standard input.
    func send(_ line: String) { process.send(line) }

    /// Closes the child's standard input (end of file).
    func closeInput() { process.closeInput() }

    /// Waits for the process to exit; returns its status, all its output and its standard error.
    func finish() async -> (status: Int32, output: String, errors: String) { await process.finish() }

    /// Stops the process (SIGTERM); the shared loop reaps it.
    func terminate() { process.signal(SIGTERM) }

    deinit { terminate() }
}

/// A private dbus-daemon (session configuration: no policy in the way), stopped on deinit.
final class PrivateBus: Sendable {
    let daemon: ChildProcess
    let address: String

    init() async throws {
        daemon = try await ChildProcess(
            "/usr/bin/dbus-daemon", ["--session", "--nofork", "--print-address=1", "--address=unix:tmpdir=/tmp"])
        guard let line = try await daemon.readLine(within: 30), line.hasPrefix("unix:") else {
            throw HarnessError("dbus-daemon did not print its address")
        }
        address = line
    }
}

/// The built blesim binary serving on `bus`; ready once it printed its ready line.
final class Blesim: Sendable {
    let child: ChildProcess

    static var executable: String {
        ProcessInfo.processInfo.environment["BLESIM"] ?? repositoryRoot + "/.build/debug/blesim"
    }

    init(bus: PrivateBus, arguments: [String] = []) async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw HarnessError("no blesim binary at \(Self.executable): run `swift build` first")
        }
        child = try await ChildProcess(Self.executable, ["--address", bus.address] + arguments)
        guard try await child.waitForLine(within: 60, where: { $0.hasPrefix("blesim: ready") }) != nil else {
            child.terminate()
            throw HarnessError("blesim did not become ready: \(await child.finish())")
        }
    }
}
