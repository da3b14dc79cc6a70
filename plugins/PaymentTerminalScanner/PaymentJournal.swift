import Glibc
import IO
import Synchronization

/// Why the journal could not be read or written.
public enum JournalError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A system call failed.
    case system(SystemError)
    /// A complete line before the end is damaged: not a torn tail but a
    /// corrupted journal, which is never silently skipped.
    case corruptRecord(path: String, line: Int)

    /// One sentence.
    public var description: String {
        switch self {
        case .system(let error): error.description
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
/// survives a crash. Opening it drops a torn tail.
///
/// Every file operation runs on the process's ``BlockingPool``, one at a
/// time, in the order asked for (a ``BlockingQueue``): callers await the sync
/// and never block a thread. ``read(path:)`` alone is a plain blocking read
/// (for tests and tools).
public final class PaymentJournal: Sendable {
    /// The file's path.
    public let path: String
    private let fd: Mutex<FileDescriptor>
    private let queue = BlockingQueue()

    private init(path: String, fd: FileDescriptor) {
        self.path = path
        self.fd = Mutex(fd)
    }

    deinit { fd.withLock { $0.close() } }

    /// Reads the journal at `path` (absent: empty). Blocking.
    public static func read(path: String) throws(JournalError) -> JournalContents {
        try JournalContents.decode(try readAll(path), path: path)
    }

    /// Opens (creating) the journal at `path` for appending, on the blocking
    /// pool; a torn tail is cut off (and the cut synced) first. Returns the
    /// journal and what it held.
    public static func open(path: String) async throws(JournalError) -> (PaymentJournal, JournalContents) {
        try await BlockingPool.shared.run { () throws(JournalError) in
            let contents = try read(path: path)
            let fd: FileDescriptor
            do throws(SystemError) {
                fd = try FileDescriptor.open(path, .writeOnly, options: [.create, .append])
            } catch {
                throw .system(error)
            }
            if contents.tornBytes > 0 {
                do throws(SystemError) {
                    try fd.truncate(to: contents.validLength)
                    try fd.sync()
                } catch {
                    fd.close()
                    throw .system(SystemError("truncate", path: path, errno: error.errno))
                }
            }
            syncDirectory(of: path)
            return (PaymentJournal(path: path, fd: fd), contents)
        }
    }

    /// Appends `record` and syncs it to disk; returns once it is there.
    /// Appends made one after the other (by one actor) reach the file in
    /// that order.
    nonisolated(nonsending) public func append(_ record: JournalRecord) async throws(JournalError) {
        try await queue.run { () throws(JournalError) in
            try self.fd.withLock { fd throws(JournalError) in
                try Self.write(record.line, to: fd, path: self.path)
                do throws(SystemError) {
                    try fd.sync()
                } catch {
                    throw .system(SystemError("fsync", path: self.path, errno: error.errno))
                }
            }
        }
    }

    /// Replaces the journal with the records that rebuild `state` (final
    /// payments included), atomically: a crash leaves the old or the new file.
    nonisolated(nonsending) public func compact(to state: JournalState) async throws(JournalError) {
        let bytes = state.compactedRecords.flatMap(\.line)
        try await queue.run { () throws(JournalError) in
            let path = self.path
            do throws(SystemError) {
                try AtomicFile.replace(path, with: bytes, temporary: path + ".compact")
            } catch {
                throw .system(error)
            }
            Self.syncDirectory(of: path)
            let reopened: FileDescriptor
            do throws(SystemError) {
                reopened = try FileDescriptor.open(path, .writeOnly, options: [.append])
            } catch {
                throw .system(error)
            }
            self.fd.withLock { fd in
                fd.close()
                fd = reopened
            }
        }
    }

    private static func write(_ bytes: [UInt8], to fd: FileDescriptor, path: String) throws(JournalError) {
        do throws(SystemError) {
            try fd.writeAll(bytes)
        } catch {
            throw .system(SystemError("write", path: path, errno: error.errno))
        }
    }

    private static func readAll(_ path: String) throws(JournalError) -> [UInt8] {
        do throws(SystemError) {
            return try RegularFile.readIfPresent(path, limit: Int.max) ?? []
        } catch {
            throw .system(error)
        }
    }

    private static func syncDirectory(of path: String) {
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        try? AtomicFile.syncDirectory(directory.isEmpty ? "/" : directory)
    }
}
