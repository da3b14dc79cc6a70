internal import CLinux
import Glibc

/// Reads a connection's socket and cuts what it reads into messages in wire form, with the Unix file descriptors
/// that came with them. Owned by the connection's owner thread.
///
/// One ``read(_:)`` makes one `recvmsg` of up to ``chunk`` bytes (more only while a larger message is being
/// assembled) and hands every message it completes to its caller at once, so the socket itself is the only queue
/// between the bus and the connection's dispatch: when dispatch falls behind, what the bus has to send waits in the
/// bus (within its own limits), not in this process's memory. Descriptors wait in arrival order until the message whose header counts them
/// (`UNIX_FDS`) is complete; the kernel delivers them with that message's first byte.
struct WireSocketReader: ~Copyable {
    /// Bytes asked for per read.
    static let chunk = 64 * 1024
    /// Descriptors kept waiting for their message at most (dbus-daemon passes at most 16 with one message).
    static let maximumPendingFDs = 1024

    let fd: Int32
    private var buffer = [UInt8](repeating: 0, count: WireSocketReader.chunk)
    private var start = 0
    private var end = 0
    private var fds: [Int32] = []
    /// Whether the last read took all the room it had: more is probably waiting in the socket.
    private(set) var filledLastRead = false

    init(fd: Int32) { self.fd = fd }

    deinit {
        for fd in fds { _ = Glibc.close(fd) }
    }

    /// Reads once and delivers each complete message, in order; messages of a type this version does not know are
    /// dropped, as the specification asks. Returns why the connection is over (end of stream, a read error, or
    /// bytes that are not D-Bus), or nil while it goes on (the loop is level-triggered: what is left is read at the
    /// next readiness).
    mutating func read(_ deliver: (DBusMessage) -> Void) -> String? {
        makeRoom()
        let room = buffer.count - end
        var received: [Int32] = Array(repeating: -1, count: 64)
        var count: Int32 = 0
        var truncated: Int32 = 0
        var result: Int
        repeat {
            result = buffer.withUnsafeMutableBytes { bytes in
                received.withUnsafeMutableBufferPointer { fdBuffer in
                    clinux_recv_with_fds(
                        fd, bytes.baseAddress! + end, room, fdBuffer.baseAddress, Int32(fdBuffer.count), &count,
                        &truncated)
                }
            }
        } while result < 0 && errno == EINTR
        if result < 0 {
            let code = errno
            if code == EAGAIN || code == EWOULDBLOCK {
                filledLastRead = false
                return nil
            }
            return "reading the bus socket failed: \(String(cString: strerror(code)))"
        }
        fds.append(contentsOf: received.prefix(Int(count)))
        if truncated != 0 || fds.count > Self.maximumPendingFDs {
            return "file descriptors sent with a message were lost"
        }
        if result == 0 { return "the peer closed the connection" }
        filledLastRead = result == room
        end += result
        return deliverComplete(deliver)
    }

    /// Cuts complete messages off the front of the buffer; returns why the stream cannot go on, if it cannot.
    private mutating func deliverComplete(_ deliver: (DBusMessage) -> Void) -> String? {
        while end - start >= WireHeader.fixedLength {
            let prefix = buffer.withUnsafeBytes {
                WireHeader.messageLength(UnsafeRawBufferPointer(rebasing: $0[start..<(start + WireHeader.fixedLength)]))
            }
            let length: Int
            switch prefix {
            case .success(let value): length = value
            case .failure(let error): return error.description
            }
            guard end - start >= length else { return nil }
            let bytes = Array(buffer[start..<(start + length)])
            start += length
            let header: WireHeader
            do {
                header = try WireMessage.header(of: bytes)
            } catch {
                return error.description
            }
            guard header.unixFDs <= fds.count else {
                return "a message declares \(header.unixFDs) file descriptors and \(fds.count) came"
            }
            let owned = WireMessage(bytes: bytes, layout: header.layout, fds: Array(fds.prefix(header.unixFDs)))
            fds.removeFirst(header.unixFDs)
            if (1...4).contains(header.type) { deliver(DBusMessage(wire: owned, header: header)) }
        }
        return nil
    }

    /// Moves what is left to the front, and grows the buffer for a message larger than it.
    private mutating func makeRoom() {
        if start == end {
            start = 0
            end = 0
        } else if start > 0 && buffer.count - end < Self.chunk / 4 {
            buffer.withUnsafeMutableBytes { bytes in
                let base = bytes.baseAddress!
                memmove(base, base + start, end - start)
            }
            end -= start
            start = 0
        }
        let pending = end - start
        var needed = Self.chunk
        if pending >= WireHeader.fixedLength {
            let prefix = buffer.withUnsafeBytes {
                WireHeader.messageLength(UnsafeRawBufferPointer(rebasing: $0[start..<(start + WireHeader.fixedLength)]))
            }
            if case .success(let length) = prefix { needed = max(needed, start + length) }
        }
        if needed > buffer.count {
            buffer.append(contentsOf: repeatElement(0, count: needed - buffer.count))
        } else if buffer.count > Self.chunk && pending == 0 {
            buffer = [UInt8](repeating: 0, count: Self.chunk)
        }
        if buffer.count - end == 0 {
            buffer.append(contentsOf: repeatElement(0, count: Self.chunk))
        }
    }
}
