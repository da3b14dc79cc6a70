import Glibc

/// What /proc says about one process.
enum ProcFigures {
    private static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// utime + stime in seconds (/proc/PID/stat fields 14 and 15), nil once it is gone.
    static func cpuSeconds(_ pid: pid_t) -> Double? {
        guard let text = readText("/proc/\(pid)/stat"), let close = text.lastIndex(of: ")") else { return nil }
        // Fields after the command name: state is field 3, so utime (14) is the 12th here.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / ticksPerSecond
    }

    /// Each live thread's CPU seconds, exact (the first field of /proc/PID/task/TID/schedstat, nanoseconds),
    /// by thread id; empty once the process is gone or where the kernel keeps no schedstat.
    static func threadCPUSeconds(_ pid: pid_t) -> [Int: Double] {
        guard let directory = opendir("/proc/\(pid)/task") else { return [:] }
        defer { closedir(directory) }
        var threads: [Int: Double] = [:]
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let tid = Int(name), let text = readText("/proc/\(pid)/task/\(tid)/schedstat"),
                let field = text.split(separator: " ").first, let nanoseconds = Double(field)
            else { continue }
            threads[tid] = nanoseconds / 1e9
        }
        return threads
    }

    /// VmRSS in MiB (/proc/PID/status), nil once it is gone.
    static func rssMiB(_ pid: pid_t) -> Double? {
        guard let text = readText("/proc/\(pid)/status") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Double($0) }
            return kilobytes.map { $0 / 1024 }
        }
        return nil
    }
}

/// CPU seconds of several processes between two moments.
///
/// utime + stime count in clock ticks (10 ms), too coarse for a window in which a client used a few tenths of a
/// second; the scheduler's own nanoseconds per thread (`/proc/PID/task/TID/schedstat`) are exact but forget a
/// thread once it exits. So a window uses the threads' nanoseconds when every thread alive at its start is alive
/// at its end (a thread started meanwhile ran only inside the window), and the ticks otherwise.
struct CPUWindow {
    private let pids: [pid_t]
    private let before: [(ticks: Double, threads: [Int: Double])]
    private let clock = Stopwatch()

    init(_ pids: [pid_t]) {
        self.pids = pids
        before = pids.map { (ProcFigures.cpuSeconds($0) ?? 0, ProcFigures.threadCPUSeconds($0)) }
    }

    /// Each process's CPU seconds since `init`, and the wall-clock seconds.
    func end() -> (cpu: [Double], seconds: Double) {
        let seconds = clock.seconds
        let used = zip(pids, before).map { pid, start -> Double in
            let threads = ProcFigures.threadCPUSeconds(pid)
            if !start.threads.isEmpty, start.threads.keys.allSatisfy({ threads[$0] != nil }) {
                return threads.values.reduce(0, +) - start.threads.values.reduce(0, +)
            }
            return (ProcFigures.cpuSeconds(pid) ?? start.ticks) - start.ticks
        }
        return (used, seconds)
    }
}

/// A whole small file as text (nil when it cannot be read).
func readText(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = read(fd, &buffer, buffer.count)
        if count < 0, errno == EINTR { continue }
        guard count > 0 else { break }
        bytes += buffer[0..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Writes `text` to `path` (replacing it).
func writeText(_ text: String, to path: String) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw BenchFailure("cannot write \(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let count = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if count < 0, errno == EINTR { continue }
        guard count > 0 else { throw BenchFailure("cannot write \(path): \(String(cString: strerror(errno)))") }
        offset += count
    }
}

/// Reads lines from an fd (a pipe or a socket), waiting with poll up to a deadline.
final class LineReader {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(fd: Int32) { self.fd = fd }

    /// The next line (without its newline), or nil at end of file or after `timeout` seconds.
    func next(timeout: Double) -> String? {
        let clock = Stopwatch()
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let left = timeout - clock.seconds
            guard left > 0 else { return nil }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(left * 1000 + 1, 60_000)))
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = read(fd, &chunk, chunk.count)
            if count < 0, errno == EINTR || errno == EAGAIN { continue }
            guard count > 0 else { return nil }
            buffer += chunk[0..<count]
        }
    }
}

/// A pipe whose ends are close-on-exec.
func makePipe() throws -> (read: Int32, write: Int32) {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { throw BenchFailure("pipe: \(String(cString: strerror(errno)))") }
    for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    return (fds[0], fds[1])
}

/// The value at `share` (0...1) of `sorted`, nil when empty.
func percentile(_ sorted: [Double], _ share: Double) -> Double? {
    sorted.isEmpty ? nil : sorted[min(sorted.count - 1, Int(share * Double(sorted.count)))]
}
