import Glibc
import IO

/// Reads the key file with its checks: a regular file, owned by the agent's
/// user or root, that neither group nor others may read or write (the
/// checks are made on the opened file, so it cannot be swapped between
/// check and read; opened non-blocking, a FIFO is refused, never waited on).
/// Blocking: call it on the core's blocking pool (``read(_:on:)``).
enum BindKeyFileReader {
    static func read(_ path: String) throws(BindKeyFileError) -> BindKeyFile {
        let file = try system(path) { () throws(SystemError) in
            try FileDescriptor.open(path, .readOnly, options: [.nonBlocking, .noControllingTerminal])
        }
        defer { file.close() }
        let status = try system(path) { () throws(SystemError) in try file.status() }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .notRegularFile }
        let owner = geteuid()
        guard status.st_uid == owner || status.st_uid == 0 else {
            throw .foreignOwner(uid: status.st_uid, expected: owner)
        }
        guard status.st_mode & 0o077 == 0 else { throw .tooOpen(mode: status.st_mode & 0o7777) }
        guard status.st_size <= BindKeyFile.maximumBytes else { throw .tooLarge }
        let bytes: [UInt8]
        do {
            bytes = try file.readToEnd(limit: BindKeyFile.maximumBytes)
        } catch  where error.errno == .fileTooLarge {
            throw .tooLarge
        } catch {
            throw .system(error.located(at: path))
        }
        return try BindKeyFile.parse(bytes)
    }

    /// ``read(_:)`` on `pool`: a blocking read of a configured path stays off Swift's cooperative pool.
    static func read(_ path: String, on pool: BlockingPool) async throws(BindKeyFileError) -> BindKeyFile {
        try await pool.run { () throws(BindKeyFileError) in try read(path) }
    }

    private static func system<T>(_ path: String, _ body: () throws(SystemError) -> T) throws(BindKeyFileError) -> T {
        do {
            return try body()
        } catch {
            throw .system(error.located(at: path))
        }
    }
}
