import Glibc
import IO
import Synchronization

/// The Unix datagram socket other processes send readings to
/// (`ingest.socketPath`): bound at open with mode 0660, read on the process's
/// shared ``EventLoop`` when the kernel says it is readable (no polling, no
/// thread of its own), each datagram handed to ``datagrams`` as bytes.
/// Closing unlinks the path.
public final class IngestSocket: Sendable {
    /// The datagrams received, at most `maxLineBytes + 1` bytes each (a
    /// longer one arrives cut at that length, so the parser counts it `tooLong`).
    public var datagrams: AsyncStream<[UInt8]> { queue.stream }
    /// Datagrams dropped unparsed because `bufferLimit` were already waiting.
    public var overflowed: Int { queue.dropped }
    /// The socket's path.
    public let path: String
    private let fd: FileDescriptor
    private let loop: EventLoop
    private let registration: Mutex<EventLoop.Registration?>
    private let queue: DatagramQueue

    /// The most datagrams read per readiness, so a flood cannot hold the loop.
    private static let readBudget = 64

    /// Binds `path` (a stale socket file there is replaced; any other file
    /// is an error) with permission bits `mode`. At most `bufferLimit`
    /// datagrams wait to be parsed; past that the oldest is dropped and
    /// counted (``overflowed``), so a flood never grows memory.
    public init(
        path: String, maxLineBytes: Int, mode: mode_t = 0o660, bufferLimit: Int = 256, loop: EventLoop = .shared
    ) throws(SystemError) {
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFSOCK else {
                throw SystemError("bind", path: path, errno: .fileExists, detail: "exists and is not a socket")
            }
            unlink(path)
        }
        let fd = try UnixSocket.make(type: Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue))
        do throws(SystemError) {
            try UnixSocket.bind(fd, to: path)
            try systemCall("chmod", path: path) { chmod(path, mode) }
        } catch {
            fd.close()
            throw error
        }
        self.path = path
        self.fd = fd
        self.loop = loop
        let queue = DatagramQueue(limit: bufferLimit)
        self.queue = queue
        let capacity = maxLineBytes + 1
        do {
            registration = Mutex(
                try loop.register(fd, interest: .readable) { _ in
                    var buffer = [UInt8](repeating: 0, count: capacity)
                    for _ in 0..<Self.readBudget {
                        let count = buffer.withUnsafeMutableBytes { recv(fd.rawValue, $0.baseAddress, capacity, 0) }
                        guard count >= 0 else { break }  // EAGAIN: drained
                        queue.push(Array(buffer[..<count]))
                    }
                })
        } catch {
            unlink(path)
            fd.close()
            throw error
        }
    }

    /// Removes its path (before returning: a new socket may be bound there at
    /// once), stops reading and closes the socket.
    public func close() {
        guard
            let registration = registration.withLock({ state in
                defer { state = nil }; return state
            })
        else {
            return
        }
        unlink(path)
        loop.deregister(registration)
        fd.close()
        queue.finish()
    }
}

/// The datagrams waiting between the socket's reader and the plugin: at most
/// `limit`; pushing onto a full queue drops the oldest and counts it.
public final class DatagramQueue: Sendable {
    /// The datagrams, oldest first.
    public let stream: AsyncStream<[UInt8]>
    private let continuation: AsyncStream<[UInt8]>.Continuation
    private let droppedCount = Mutex(0)

    /// An empty queue holding at most `limit` datagrams.
    public init(limit: Int) {
        (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .bufferingNewest(limit))
    }

    /// How many datagrams were dropped because the queue was full.
    public var dropped: Int { droppedCount.withLock { $0 } }

    /// Adds a datagram (dropping and counting the oldest when full).
    public func push(_ datagram: [UInt8]) {
        if case .dropped = continuation.yield(datagram) { droppedCount.withLock { $0 += 1 } }
    }

    /// Ends the stream.
    public func finish() { continuation.finish() }
}
