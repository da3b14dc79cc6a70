import Glibc

/// A Python peer (scripts/blebench/bleak_peer.py or bless_peer.py in the bench venv) on a rig's bus,
/// driven by command lines on its standard input; it answers each with one line on standard output.
final class Peer {
    let pid: pid_t
    let name: String
    private let input: Int32
    private let reader: LineReader
    private let log: String

    init(_ name: String, script: String, arguments: [String], on rig: Rig, installation: Installation) throws {
        let commands = try makePipe()
        let replies = try makePipe()
        log = rig.directory + "/\(name).log"
        let logFD = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer { close(logFD) }
        self.name = name
        pid = try Children.spawn(
            [installation.python, "-u", installation.script(script)] + arguments,
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": rig.address, "PYTHONDONTWRITEBYTECODE": "1"],
            streams: .init(input: commands.read, output: replies.write, error: logFD))
        close(commands.read)
        close(replies.write)
        input = commands.write
        reader = LineReader(fd: replies.read)
        _ = try expect("ready", timeout: 60)
    }

    deinit {
        close(input)
        close(reader.fd)
    }

    /// Sends `command` and returns the fields of its answer, which must start with `word`.
    func ask(_ command: String, expecting word: String, timeout: Double = 60) throws -> [String] {
        let line = Array((command + "\n").utf8)
        guard line.withUnsafeBytes({ write(input, $0.baseAddress, $0.count) }) == line.count else {
            throw BenchFailure("\(name) is gone (\(tail()))")
        }
        return try expect(word, timeout: timeout)
    }

    private func expect(_ word: String, timeout: Double) throws -> [String] {
        guard let line = reader.next(timeout: timeout) else {
            throw BenchFailure("\(name) did not answer \"\(word)\" within \(timeout) s:\n\(tail())")
        }
        let fields = line.split(separator: " ").map(String.init)
        guard fields.first == word else { throw BenchFailure("\(name) answered \(line):\n\(tail())") }
        return Array(fields.dropFirst())
    }

    private func tail() -> String { String((readText(log) ?? "").suffix(2000)) }

    /// Asks it to quit, then stops it.
    func stop() {
        _ = "quit\n".utf8.withContiguousStorageIfAvailable { write(input, $0.baseAddress, $0.count) }
        let clock = Stopwatch()
        while clock.seconds < 3 {
            if Children.exited(pid) { return }
            pause(0.01)
        }
        Children.stop(pid)
    }
}
