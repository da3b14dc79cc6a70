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

/// A child process whose standard output is read line by line, with deadlines.
final class ChildProcess {
    let process = Process()
    private let output = Pipe()
    private let errors = Pipe()
    private var buffer: [UInt8] = []
    private(set) var transcript = ""

    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardOutput = output
        process.standardError = errors
        try process.run()
    }

    /// The next line of standard output, waiting at most `seconds` (on the pipe, not a sleep).
    func readLine(within seconds: Double) throws -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        let fd = output.fileHandleForReading.fileDescriptor
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                transcript += line + "\n"
                return line
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return nil }
            var pollfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pollfd, 1, Int32(min(remaining * 1000, 60_000)))
            if ready <= 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(fd, &chunk, chunk.count)
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

    /// Everything left on standard output and error, once the process has exited.
    func finish() -> (status: Int32, output: String, errors: String) {
        process.waitUntilExit()
        let rest = output.fileHandleForReading.readDataToEndOfFile()
        let stderr = errors.fileHandleForReading.readDataToEndOfFile()
        let text = transcript + String(decoding: buffer, as: UTF8.self) + String(decoding: rest, as: UTF8.self)
        return (process.terminationStatus, text, String(decoding: stderr, as: UTF8.self))
    }

    func terminate() {
        if process.isRunning {
            process.terminate()
        }
        process.waitUntilExit()
    }

    deinit { terminate() }
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
