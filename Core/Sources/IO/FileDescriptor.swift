#if canImport(Glibc)
    import Glibc
#endif

/// An open file descriptor: a number, not an owner (like swift-system's `FileDescriptor`). Whoever opened it
/// closes it with ``close()``, once; every call retries EINTR and throws ``SystemError`` with errno.
///
/// Everything opened here is close-on-exec: children get only the descriptors placed on their 0, 1 and 2.
public struct FileDescriptor: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The descriptor number.
    public let rawValue: Int32

    /// The descriptor `rawValue` (not checked).
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// Descriptor 0.
    public static let standardInput = FileDescriptor(rawValue: 0)
    /// Descriptor 1.
    public static let standardOutput = FileDescriptor(rawValue: 1)
    /// Descriptor 2.
    public static let standardError = FileDescriptor(rawValue: 2)

    /// `fd N`.
    public var description: String { "fd \(rawValue)" }

    /// How a file is opened for access (`O_RDONLY`, `O_WRONLY`, `O_RDWR`).
    public enum AccessMode: Sendable {
        /// `O_RDONLY`.
        case readOnly
        /// `O_WRONLY`.
        case writeOnly
        /// `O_RDWR`.
        case readWrite

        var flags: Int32 {
            switch self {
            case .readOnly: O_RDONLY
            case .writeOnly: O_WRONLY
            case .readWrite: O_RDWR
            }
        }
    }

    /// `open(2)` flags besides the access mode; `O_CLOEXEC` is always added.
    public struct OpenOptions: OptionSet, Sendable {
        /// The `open(2)` flag bits.
        public let rawValue: Int32
        /// Options with the flag bits `rawValue`.
        public init(rawValue: Int32) { self.rawValue = rawValue }
        /// `O_CREAT`.
        public static let create = OpenOptions(rawValue: O_CREAT)
        /// `O_TRUNC`.
        public static let truncate = OpenOptions(rawValue: O_TRUNC)
        /// `O_APPEND`.
        public static let append = OpenOptions(rawValue: O_APPEND)
        /// `O_EXCL`.
        public static let exclusive = OpenOptions(rawValue: O_EXCL)
        /// `O_NONBLOCK`: opening a FIFO does not wait for its other end.
        public static let nonBlocking = OpenOptions(rawValue: O_NONBLOCK)
        /// `O_DIRECTORY`.
        public static let directory = OpenOptions(rawValue: O_DIRECTORY)
        /// `O_NOCTTY`: a terminal does not become the controlling one.
        public static let noControllingTerminal = OpenOptions(rawValue: O_NOCTTY)
    }

    /// Opens `path` (`open(2)` with `O_CLOEXEC`); `permissions` apply when the file is created.
    public static func open(
        _ path: String, _ mode: AccessMode, options: OpenOptions = [], permissions: mode_t = 0o600
    ) throws(SystemError) -> FileDescriptor {
        let flags = mode.flags | options.rawValue | O_CLOEXEC
        return FileDescriptor(rawValue: try systemCall("open", path: path) { Glibc.open(path, flags, permissions) })
    }

    /// Closes the descriptor (errors are not reported: on Linux the number is released whatever `close` says).
    public func close() { _ = Glibc.close(rawValue) }

    /// Reads at most `buffer.count` bytes; 0 at the end of the file.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
        try systemCall("read") { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// Writes what the descriptor takes now from `buffer`; the count written.
    public func write(_ buffer: UnsafeRawBufferPointer) throws(SystemError) -> Int {
        try systemCall("write") { Glibc.write(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// Writes all of `bytes` (looping over short writes); a blocking descriptor may wait.
    public func writeAll(_ bytes: [UInt8]) throws(SystemError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                Result { () throws(SystemError) in try write(UnsafeRawBufferPointer(rebasing: raw[offset...])) }
            }
            offset += try written.get()
        }
    }

    /// Reads until the end of the file; throws `EFBIG` once more than `limit` bytes arrived.
    public func readToEnd(limit: Int) throws(SystemError) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let outcome = chunk.withUnsafeMutableBytes { raw in Result { () throws(SystemError) in try read(into: raw) }
            }
            let count = try outcome.get()
            if count == 0 { return bytes }
            bytes += chunk[..<count]
            if bytes.count > limit {
                throw SystemError("read", errno: .fileTooLarge, detail: "larger than \(limit) bytes")
            }
        }
    }

    /// `fsync(2)`: the data (and metadata) reach the disk before this returns.
    public func sync() throws(SystemError) { try systemCall("fsync") { fsync(rawValue) } }

    /// `ftruncate(2)`.
    public func truncate(to length: Int) throws(SystemError) {
        try systemCall("ftruncate") { ftruncate(rawValue, off_t(length)) }
    }

    /// `fstat(2)`.
    public func status() throws(SystemError) -> stat {
        var status = stat()
        try systemCall("fstat") { fstat(rawValue, &status) }
        return status
    }

    /// Sets or clears `O_NONBLOCK`.
    public func setNonBlocking(_ nonBlocking: Bool = true) throws(SystemError) {
        let flags = try systemCall("fcntl") { fcntl(rawValue, F_GETFL) }
        let wanted = nonBlocking ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
        if wanted != flags { try systemCall("fcntl") { fcntl(rawValue, F_SETFL, wanted) } }
    }

    /// Sets `FD_CLOEXEC`.
    public func setCloseOnExec() throws(SystemError) {
        let flags = try systemCall("fcntl") { fcntl(rawValue, F_GETFD) }
        try systemCall("fcntl") { fcntl(rawValue, F_SETFD, flags | FD_CLOEXEC) }
    }

    /// A close-on-exec duplicate numbered `minimum` or above (`F_DUPFD_CLOEXEC`).
    public func duplicate(atLeast minimum: Int32 = 0) throws(SystemError) -> FileDescriptor {
        FileDescriptor(rawValue: try systemCall("fcntl") { fcntl(rawValue, F_DUPFD_CLOEXEC, minimum) })
    }
}
