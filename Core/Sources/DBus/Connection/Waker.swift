import Glibc

/// A self-pipe that wakes the owner thread's `poll(2)` from any thread.
///
/// Writes are non-blocking: a full pipe already means a wake-up is pending, so the byte can be dropped.
final class Waker: Sendable {
    let readFD: Int32
    private let writeFD: Int32

    init() throws(DBusError) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw DBusError(.ioError, "pipe() failed: errno \(errno)") }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        readFD = fds[0]
        writeFD = fds[1]
    }

    deinit {
        _ = close(readFD)
        _ = close(writeFD)
    }

    /// Makes the next (or current) `poll` on ``readFD`` return.
    func wake() {
        var byte: UInt8 = 1
        _ = write(writeFD, &byte, 1)
    }

    /// Empties the pipe (owner thread, after `poll` reported it readable).
    func drain() {
        var buffer = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &buffer, { read(readFD, $0.baseAddress, $0.count) }) > 0 {}
    }
}
