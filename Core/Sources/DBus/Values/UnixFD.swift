import Glibc
import Synchronization

/// An owned Unix file descriptor, closed when the object is released.
///
/// Ownership rules:
/// - Sending: libdbus duplicates the descriptor when it is put into a message, so the `UnixFD` you send stays yours
///   (close it or let it go whenever you like after building the message).
/// - Receiving: every time a message body is decoded, libdbus hands out a fresh duplicate of each descriptor; the
///   decoded `UnixFD` owns that duplicate and closes it on release. Call ``take()`` to adopt the raw descriptor.
public final class UnixFD: Sendable, CustomStringConvertible {
    private let descriptor: Mutex<Int32>

    /// Takes ownership of `fd`; it will be closed when this object is released (unless taken).
    public init(owning fd: Int32) {
        descriptor = Mutex(fd)
    }

    /// Duplicates `fd` (with close-on-exec); the caller keeps `fd`.
    public static func duplicating(_ fd: Int32) throws(DBusMarshalError) -> UnixFD {
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw .closedFileDescriptor }
        return UnixFD(owning: copy)
    }

    deinit {
        let fd = descriptor.withLock { $0 }
        if fd >= 0 { _ = Glibc.close(fd) }
    }

    /// The descriptor number while owned, `nil` after ``take()`` or ``close()``.
    public var rawValue: Int32? {
        descriptor.withLock { $0 >= 0 ? $0 : nil }
    }

    /// Gives up ownership: returns the descriptor (the caller must close it) and leaves this object empty.
    public func take() -> Int32? {
        descriptor.withLock { fd in
            defer { fd = -1 }
            return fd >= 0 ? fd : nil
        }
    }

    /// A new owned duplicate of the descriptor.
    public func dup() throws(DBusMarshalError) -> UnixFD {
        guard let fd = rawValue else { throw .closedFileDescriptor }
        return try UnixFD.duplicating(fd)
    }

    /// Closes the descriptor now (idempotent).
    public func close() {
        if let fd = take() { _ = Glibc.close(fd) }
    }

    /// Runs `body` with the descriptor held open (it cannot be closed or taken meanwhile).
    func withDescriptor<T>(_ body: (Int32) throws(DBusMarshalError) -> T) throws(DBusMarshalError) -> T {
        try descriptor.withLock { (fd: inout Int32) throws(DBusMarshalError) -> T in
            guard fd >= 0 else { throw .closedFileDescriptor }
            return try body(fd)
        }
    }

    /// `UnixFD(n)` or `UnixFD(closed)`.
    public var description: String { rawValue.map { "UnixFD(\($0))" } ?? "UnixFD(closed)" }
}
