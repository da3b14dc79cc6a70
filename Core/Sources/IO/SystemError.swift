#if canImport(Glibc)
    import Glibc
#endif

/// A failed system call: what was attempted, on which path (if any), and the errno it failed with.
///
/// The one errno-carrying error of the project (in the spirit of swift-system's `Errno`, with the operation and path
/// kept for the message): file, socket, process and loop calls all throw it.
public struct SystemError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was attempted, such as `open`, `fsync`, `bind` or `epoll_ctl`.
    public var operation: String
    /// The file or socket path it was about, if any.
    public var path: String?
    /// The error code.
    public var errno: Errno
    /// A sentence replacing `strerror`'s text when the code alone would mislead (a FIFO refused as "not a regular
    /// file", a file larger than a limit).
    public var detail: String?

    /// An error of `operation` (on `path`) with `errno`.
    public init(_ operation: String, path: String? = nil, errno: Errno, detail: String? = nil) {
        self.operation = operation
        self.path = path
        self.errno = errno
        self.detail = detail
    }

    /// An error of `operation` (on `path`) with the calling thread's current errno.
    public static func current(_ operation: String, path: String? = nil) -> SystemError {
        SystemError(operation, path: path, errno: .current)
    }

    /// `path` exists but is not a regular file (a FIFO, a device, a socket, a directory): refused before anything
    /// could wait on it.
    public static func notRegularFile(_ path: String, kind: String) -> SystemError {
        SystemError("open", path: path, errno: .invalidArgument, detail: "is \(kind), not a regular file")
    }

    /// The same error about `path` (a call on a descriptor does not know the path it was opened with).
    public func located(at path: String) -> SystemError {
        var located = self
        located.path = path
        return located
    }

    /// `operation path: strerror` (or the detail in place of `strerror`).
    public var description: String {
        let subject = path.map { "\(operation) \($0)" } ?? operation
        return "\(subject): \(detail ?? errno.description)"
    }
}

/// Calls `body` again while it fails with EINTR; returns its result, or throws ``SystemError`` with `operation`,
/// `path` and errno when it returns a negative value (swift-system's `valueOrErrno` with its retry).
@discardableResult
@inlinable
public func systemCall<T: BinaryInteger>(
    _ operation: @autoclosure () -> String, path: @autoclosure () -> String? = nil, _ body: () -> T
) throws(SystemError) -> T {
    while true {
        let result = body()
        if result >= 0 { return result }
        let code = Errno.current
        if code != .interrupted { throw SystemError(operation(), path: path(), errno: code) }
    }
}
