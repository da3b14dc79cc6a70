import BLE
import Glibc

/// The outbox on disk (``OutboxLog``'s format). Every method blocks and runs
/// on the fleet's blocking thread only; one owner, never shared.
final class OutboxFile {
    let path: String
    private var fd: Int32
    /// Bytes in the file now.
    private(set) var size: Int

    private init(path: String, fd: Int32, size: Int) {
        self.path = path
        self.fd = fd
        self.size = size
    }

    deinit { close(fd) }

    /// Opens (creating the directory, mode 0700, and the file) and replays
    /// it; a torn tail is cut off and the cut synced.
    static func open(
        directory: String, name: String = "outbox.log"
    ) throws(OutboxFileError)
        -> (OutboxFile, OutboxLog.Contents)
    {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST { throw .system("mkdir", directory, errno) }
        let path = "\(directory)/\(name)"
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .system("open", path, errno) }
        let bytes: [UInt8]
        do {
            bytes = try readAll(fd, path: path)
        } catch {
            close(fd)
            throw error
        }
        let contents = OutboxLog.decode(bytes)
        if contents.validLength < bytes.count {
            guard ftruncate(fd, off_t(contents.validLength)) == 0, fsync(fd) == 0 else {
                let code = errno
                close(fd)
                throw .system("truncate", path, code)
            }
        }
        try? AtomicFile.syncDirectory(directory)
        return (OutboxFile(path: path, fd: fd, size: contents.validLength), contents)
    }

    /// Appends `bytes`; with `sync`, fsyncs before returning.
    func append(_ bytes: [UInt8], sync: Bool) throws(OutboxFileError) {
        var remaining = bytes[...]
        while !remaining.isEmpty {
            let written = remaining.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw .system("write", path, errno) }
            remaining = remaining.dropFirst(written)
            size += written
        }
        if sync, fsync(fd) != 0 { throw .system("fsync", path, errno) }
    }

    /// Replaces the file with `pending` and the next sequence number,
    /// atomically (temporary file, fsync, rename, fsync of the directory).
    func compact(pending: [OutboxEntry], nextSeq: Int64) throws(OutboxFileError) {
        let bytes = OutboxLog.nextLine(nextSeq) + pending.flatMap(OutboxLog.enqueueLine)
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        do {
            try AtomicFile.replace(path, with: bytes, temporary: "\(path).compact")
            try AtomicFile.syncDirectory(directory)
        } catch {
            throw .system(error.operation, error.path, error.errno)
        }
        let reopened = Glibc.open(path, O_RDWR | O_APPEND | O_CLOEXEC)
        guard reopened >= 0 else { throw .system("open", path, errno) }
        close(fd)
        fd = reopened
        size = bytes.count
    }

    private static func readAll(_ fd: Int32, path: String) throws(OutboxFileError) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = read(fd, &chunk, chunk.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw .system("read", path, errno)
            }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
        }
    }
}

/// A system call on the outbox file failed.
struct OutboxFileError: Error, Sendable, Hashable, CustomStringConvertible {
    let operation: String
    let path: String
    let code: Int32

    static func system(_ operation: String, _ path: String, _ code: Int32) -> OutboxFileError {
        OutboxFileError(operation: operation, path: path, code: code)
    }

    var description: String { "\(operation) \(path): \(String(cString: strerror(code)))" }
}
