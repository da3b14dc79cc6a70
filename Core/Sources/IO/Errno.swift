#if canImport(Glibc)
    import Glibc
#endif

/// An errno value: an open set (any code round-trips), with names for the ones the project tests for.
///
/// The C name is in each constant's doc comment, so `EAGAIN` stays findable.
public struct Errno: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The C value.
    public let rawValue: Int32

    /// The errno `rawValue`.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's current `errno`.
    public static var current: Errno { Errno(rawValue: errno) }

    /// `strerror`'s text, such as "No such file or directory".
    public var description: String { String(cString: strerror(rawValue)) }

    /// `EPERM`.
    public static let notPermitted = Errno(rawValue: EPERM)
    /// `ENOENT`.
    public static let noSuchFile = Errno(rawValue: ENOENT)
    /// `ESRCH`.
    public static let noSuchProcess = Errno(rawValue: ESRCH)
    /// `EINTR`.
    public static let interrupted = Errno(rawValue: EINTR)
    /// `EIO`.
    public static let ioError = Errno(rawValue: EIO)
    /// `EBADF`.
    public static let badFileDescriptor = Errno(rawValue: EBADF)
    /// `EAGAIN` (the same value as `EWOULDBLOCK` on Linux).
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    /// `ENOMEM`.
    public static let noMemory = Errno(rawValue: ENOMEM)
    /// `EACCES`.
    public static let permissionDenied = Errno(rawValue: EACCES)
    /// `EEXIST`.
    public static let fileExists = Errno(rawValue: EEXIST)
    /// `ENOTDIR`.
    public static let notDirectory = Errno(rawValue: ENOTDIR)
    /// `EISDIR`.
    public static let isDirectory = Errno(rawValue: EISDIR)
    /// `EINVAL`.
    public static let invalidArgument = Errno(rawValue: EINVAL)
    /// `ENFILE`.
    public static let tooManyOpenFilesInSystem = Errno(rawValue: ENFILE)
    /// `EMFILE`.
    public static let tooManyOpenFiles = Errno(rawValue: EMFILE)
    /// `EFBIG`.
    public static let fileTooLarge = Errno(rawValue: EFBIG)
    /// `ENOSPC`.
    public static let noSpace = Errno(rawValue: ENOSPC)
    /// `EPIPE`.
    public static let brokenPipe = Errno(rawValue: EPIPE)
    /// `ENAMETOOLONG`.
    public static let nameTooLong = Errno(rawValue: ENAMETOOLONG)
    /// `ENOBUFS`.
    public static let noBufferSpace = Errno(rawValue: ENOBUFS)
    /// `ECONNABORTED`.
    public static let connectionAborted = Errno(rawValue: ECONNABORTED)
    /// `ECONNREFUSED`.
    public static let connectionRefused = Errno(rawValue: ECONNREFUSED)
    /// `ETIMEDOUT`.
    public static let timedOut = Errno(rawValue: ETIMEDOUT)
    /// `ECHILD`.
    public static let noChild = Errno(rawValue: ECHILD)
    /// `ECANCELED`.
    public static let canceled = Errno(rawValue: ECANCELED)
}
