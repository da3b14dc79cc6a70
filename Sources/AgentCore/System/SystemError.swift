#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A failed system call: what was attempted and the errno it failed with.
public struct SystemError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was attempted, such as `bind /run/bleagent/control.sock`.
    public let operation: String
    /// The errno value.
    public let errno: Int32

    /// An error for `operation` with `errno`.
    public init(_ operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
    }

    /// An error for `operation` with the calling thread's current errno.
    static func current(_ operation: String) -> SystemError {
        SystemError(operation, errno: Glibc.errno)
    }

    /// `operation: strerror(errno)`.
    public var description: String {
        "\(operation): \(String(cString: strerror(errno)))"
    }
}

/// Calls `body` again while it fails with EINTR; returns its result or throws.
@discardableResult
func retryingEINTR<T: BinaryInteger>(
    _ operation: @autoclosure () -> String, _ body: () -> T
) throws(SystemError)
    -> T
{
    while true {
        let result = body()
        if result >= 0 { return result }
        if errno != EINTR { throw SystemError.current(operation()) }
    }
}
