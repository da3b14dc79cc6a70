import Dispatch
import Glibc
import Synchronization

/// Why the ingest socket could not be opened.
public struct IngestSocketError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What failed, with errno's text.
    public let description: String
}

/// The Unix datagram socket other processes send readings to
/// (`ingest.socketPath`): bound at open with mode 0660, read when the kernel
/// says it is readable (a dispatch read source, no polling), each datagram
/// handed to ``datagrams`` as bytes. Closing unlinks the path.
public final class IngestSocket: Sendable {
    /// The datagrams received, at most `maxLineBytes + 1` bytes each (a
    /// longer one arrives cut at that length, so the parser counts it `tooLong`).
    public var datagrams: AsyncStream<[UInt8]> { queue.stream }
    /// Datagrams dropped unparsed because `bufferLimit` were already waiting.
    public var overflowed: Int { queue.dropped }
    /// The socket's path.
    public let path: String
    private let source: Mutex<(any DispatchSourceRead)?>
    private let queue: DatagramQueue

    /// Binds `path` (a stale socket file there is replaced; any other file
    /// is an error) with permission bits `mode`. At most `bufferLimit`
    /// datagrams wait to be parsed; past that the oldest is dropped and
    /// counted (``overflowed``), so a flood never grows memory.
    public init(
        path: String, maxLineBytes: Int, mode: mode_t = 0o660, bufferLimit: Int = 256
    ) throws(IngestSocketError) {
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFSOCK else {
                throw IngestSocketError(description: "\(path) exists and is not a socket")
            }
            unlink(path)
        }
        let fd = socket(
            AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw IngestSocketError(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            Glibc.close(fd)
            throw IngestSocketError(description: "\(path) is too long for a socket path")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in bytes.enumerated() { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, chmod(path, mode) == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw IngestSocketError(description: "cannot bind \(path): \(reason)")
        }
        self.path = path
        let queue = DatagramQueue(limit: bufferLimit)
        self.queue = queue
        let capacity = maxLineBytes + 1
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: DispatchQueue(label: "bleagent.ingest"))
        source.setEventHandler {
            var buffer = [UInt8](repeating: 0, count: capacity)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, capacity, 0) }
                guard count >= 0 else { break }  // EAGAIN: drained
                queue.push(Array(buffer[..<count]))
            }
        }
        source.setCancelHandler {
            Glibc.close(fd)
            queue.finish()
        }
        source.resume()
        self.source = Mutex(source)
    }

    /// Removes its path (before returning: a new socket may be bound there at
    /// once), stops reading and closes the socket.
    public func close() {
        source.withLock { source in
            if source != nil { unlink(path) }
            source?.cancel()
            source = nil
        }
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
