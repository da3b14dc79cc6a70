import Glibc

/// Why the journal could not be read or written.
public enum JournalError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A system call failed.
    case system(operation: String, path: String, errno: Int32)
    /// A complete line before the end is damaged: not a torn tail but a
    /// corrupted journal, which is never silently skipped.
    case corruptRecord(path: String, line: Int)

    /// One sentence.
    public var description: String {
        switch self {
        case .system(let operation, let path, let code): "\(operation) \(path): \(String(cString: strerror(code)))"
        case .corruptRecord(let path, let line):
            "\(path): line \(line) is damaged and is followed by more records; the journal needs an operator"
        }
    }
}

/// What reading a journal found.
public struct JournalContents: Sendable, Hashable {
    /// The good records, in order.
    public var records: [JournalRecord]
    /// The length of the good prefix, in bytes.
    public var validLength: Int
    /// Bytes after it: a record torn by a crash mid-append (never synced, so
    /// never acknowledged), ignored.
    public var tornBytes: Int

    /// Decodes a journal's bytes. Only the last line may be bad (torn); a bad
    /// line followed by a good one throws ``JournalError/corruptRecord(path:line:)``.
    public static func decode(_ bytes: [UInt8], path: String) throws(JournalError) -> JournalContents {
        var records: [JournalRecord] = []
        var start = 0
        var lineNumber = 0
        var badLine: Int?
        var validLength = 0
        while start < bytes.count {
            lineNumber += 1
            guard let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) else {
                break
            }
            let record = JournalRecord(line: bytes[start..<newline])
            if let record {
                if let badLine { throw .corruptRecord(path: path, line: badLine) }
                records.append(record)
                validLength = newline + 1
            } else if badLine == nil {
                badLine = lineNumber
            }
            start = newline + 1
        }
        return JournalContents(records: records, validLength: validLength, tornBytes: bytes.count - validLength)
    }
}

/// The payment journal on disk: append-only, each record synced (fsync)
/// before ``append(_:)`` returns, so that a record the caller acted on
/// survives a crash. Opening it drops a torn tail. One owner (the scanner's
/// payment task); not shared between threads.
public final class PaymentJournal {
    /// The file's path.
    public let path: String
    private var fd: Int32

    private init(path: String, fd: Int32) {
        self.path = path
        self.fd = fd
    }

    deinit { close(fd) }

    /// Reads the journal at `path` (absent: empty).
    public static func read(path: String) throws(JournalError) -> JournalContents {
        try JournalContents.decode(try readAll(path), path: path)
    }

    /// Opens (creating) the journal at `path` for appending; a torn tail is
    /// cut off (and the cut synced) first. Returns the journal and what it held.
    public static func open(path: String) throws(JournalError) -> (PaymentJournal, JournalContents) {
        let contents = try read(path: path)
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .system(operation: "open", path: path, errno: errno) }
        if contents.tornBytes > 0 {
            guard ftruncate(fd, off_t(contents.validLength)) == 0, fsync(fd) == 0 else {
                let code = errno
                close(fd)
                throw .system(operation: "truncate", path: path, errno: code)
            }
        }
        syncDirectory(of: path)
        return (PaymentJournal(path: path, fd: fd), contents)
    }

    /// Appends `record` and syncs it to disk.
    public func append(_ record: JournalRecord) throws(JournalError) {
        try Self.writeAll(fd, record.line, path: path)
        guard fsync(fd) == 0 else { throw .system(operation: "fsync", path: path, errno: errno) }
    }

    /// Replaces the journal with the records that rebuild `state` (final
    /// payments included), atomically: a crash leaves the old or the new file.
    public func compact(to state: JournalState) throws(JournalError) {
        let temporary = path + ".compact"
        let newFD = Glibc.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard newFD >= 0 else { throw .system(operation: "open", path: temporary, errno: errno) }
        do throws(JournalError) {
            try Self.writeAll(newFD, state.compactedRecords.flatMap(\.line), path: temporary)
            guard fsync(newFD) == 0 else {
                throw JournalError.system(operation: "fsync", path: temporary, errno: errno)
            }
        } catch {
            close(newFD)
            unlink(temporary)
            throw error
        }
        close(newFD)
        guard rename(temporary, path) == 0 else { throw .system(operation: "rename", path: path, errno: errno) }
        Self.syncDirectory(of: path)
        let reopened = Glibc.open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard reopened >= 0 else { throw .system(operation: "open", path: path, errno: errno) }
        close(fd)
        fd = reopened
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws(JournalError) {
        var remaining = bytes[...]
        while !remaining.isEmpty {
            let written = remaining.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw .system(operation: "write", path: path, errno: errno) }
            remaining = remaining.dropFirst(written)
        }
    }

    private static func readAll(_ path: String) throws(JournalError) -> [UInt8] {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return [] }
            throw .system(operation: "open", path: path, errno: errno)
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = Glibc.read(fd, &chunk, chunk.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw .system(operation: "read", path: path, errno: errno)
            }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
        }
    }

    private static func syncDirectory(of path: String) {
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let fd = Glibc.open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            _ = fsync(fd)
            close(fd)
        }
    }
}
