import IO
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A client of a Unix stream socket that speaks in lines (the control API): its replies are read on the shared
/// loop as they arrive, and ``readLine(within:)`` awaits the next one; sending waits for room in the socket on
/// the loop too. Nothing blocks a thread.
public final class LineSocket: Sendable {
    /// The socket (non-blocking; the collector reads a duplicate of it).
    public let fd: FileDescriptor
    private let replies: OutputCollector
    private let consumed = Mutex(0)
    private let closed = Mutex(false)

    /// Connects to `path`.
    public convenience init(path: String) throws(SystemError) {
        try self.init(adopting: try UnixSocket.connect(to: path))
    }

    /// Takes over a connected socket (which it closes): replies are read from now on.
    public init(adopting fd: FileDescriptor) throws(SystemError) {
        brokenPipesIgnored
        self.fd = fd
        do {
            let reading = try fd.duplicate()
            replies = try OutputCollector(reading, limit: 256 << 20)
        } catch {
            fd.close()
            throw error
        }
    }

    deinit { close() }

    /// Closes the connection.
    public func close() {
        let first = closed.withLock { closed in
            defer { closed = true }
            return !closed
        }
        guard first else { return }
        replies.close()
        fd.close()
    }

    /// Everything received so far.
    public var received: String { replies.text }

    /// Whether the server closed the connection.
    public var isFinished: Bool { replies.isFinished }

    /// Sends `bytes` whole, waiting on the loop whenever the socket is full; `false` when the peer is gone.
    @discardableResult
    public func send(bytes: [UInt8]) async -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw in
                Result { () throws(SystemError) in try fd.send(UnsafeRawBufferPointer(rebasing: raw[offset...])) }
            }
            switch sent {
            case .success(.done(let count)): offset += count
            case .success(.wouldBlock): guard await writable() else { return false }
            case .failure: return false
            }
        }
        return true
    }

    /// Sends `text` and a newline.
    @discardableResult
    public func sendLine(_ text: String) async -> Bool { await send(bytes: Array((text + "\n").utf8)) }

    private func writable() async -> Bool { await waitUntilWritable(fd.rawValue) }

    /// The next line received (without its newline); `nil` when the connection ends first, or with an issue when
    /// the deadline passes.
    public func readLine(within deadline: Duration = testDeadline) async -> String? {
        let start = consumed.withLock { $0 }
        let found = await replies.wait(timeout: deadline) { bytes in
            start <= bytes.count && bytes[start...].contains(UInt8(ascii: "\n"))
        }
        guard found else {
            if !replies.isFinished { Issue.record("no line within \(deadline)") }
            return nil
        }
        let bytes = replies.bytes
        guard let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        consumed.withLock { $0 = newline + 1 }
        return String(decoding: bytes[start..<newline], as: UTF8.self)
    }

    /// Waits until the server closes the connection: `true`, or `false` when the deadline passes first.
    public func waitForClose(within deadline: Duration = testDeadline) async -> Bool {
        await replies.waitForEnd(timeout: deadline)
    }
}
