import Glibc

/// A failed step of ``AtomicFile/replace(_:with:temporary:)`` or
/// ``AtomicFile/syncDirectory(_:)``: the operation (`open`, `write`,
/// `fsync`, `rename`), the path it was about and its errno.
public struct AtomicFileError: Error, Hashable, Sendable {
    /// The operation that failed.
    public var operation: String
    /// The file or directory it was about.
    public var path: String
    /// The errno value.
    public var errno: Int32
}

/// Replacing a file so that a reader (or the next start after a crash, even
/// SIGKILL or power loss) finds the old content or the new one, never a
/// part: the core's one implementation, used by the BLE restoration store,
/// RoleKit's plugin state store, and the agent's fleet outbox and config push.
public enum AtomicFile {
    /// Writes `bytes` to `temporary` (mode 0600), fsyncs it and renames it
    /// onto `path`. `temporary` must be in `path`'s directory; it is removed
    /// when a step fails. Call ``syncDirectory(_:)`` afterwards to make the
    /// rename durable.
    public static func replace(_ path: String, with bytes: [UInt8], temporary: String) throws(AtomicFileError) {
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw AtomicFileError(operation: "open", path: temporary, errno: errno) }
        var remaining = bytes[...]
        while !remaining.isEmpty {
            let written = remaining.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                let code = errno
                close(fd)
                unlink(temporary)
                throw AtomicFileError(operation: "write", path: temporary, errno: code)
            }
            remaining = remaining.dropFirst(written)
        }
        let synced = fsync(fd) == 0
        let code = errno
        close(fd)
        guard synced else {
            unlink(temporary)
            throw AtomicFileError(operation: "fsync", path: temporary, errno: code)
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw AtomicFileError(operation: "rename", path: path, errno: code)
        }
    }

    /// fsyncs `directory`, so that a rename in it survives a power loss.
    public static func syncDirectory(_ directory: String) throws(AtomicFileError) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw AtomicFileError(operation: "open", path: directory, errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw AtomicFileError(operation: "fsync", path: directory, errno: errno) }
    }
}
