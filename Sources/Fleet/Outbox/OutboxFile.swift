import Glibc
import IO

/// The outbox on disk (``OutboxLog``'s format). Every method blocks and runs
/// on the fleet's ordered queue of the blocking pool only; one owner, never
/// shared.
final class OutboxFile {
    let path: String
    private var fd: FileDescriptor
    /// Bytes in the file now.
    private(set) var size: Int

    private init(path: String, fd: FileDescriptor, size: Int) {
        self.path = path
        self.fd = fd
        self.size = size
    }

    deinit { fd.close() }

    /// Opens (creating the directory, mode 0700, and the file) and replays
    /// it; a torn tail is cut off and the cut synced.
    static func open(
        directory: String, name: String = "outbox.log"
    ) throws(SystemError)
        -> (OutboxFile, OutboxLog.Contents)
    {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST { throw .current("mkdir", path: directory) }
        let path = "\(directory)/\(name)"
        let fd = try FileDescriptor.open(path, .readWrite, options: [.create, .append])
        let contents: OutboxLog.Contents
        do throws(SystemError) {
            let bytes = try fd.readToEnd(limit: Int.max)
            contents = OutboxLog.decode(bytes)
            if contents.validLength < bytes.count {
                try fd.truncate(to: contents.validLength)
                try fd.sync()
            }
        } catch {
            fd.close()
            throw error.located(at: path)
        }
        try? AtomicFile.syncDirectory(directory)
        return (OutboxFile(path: path, fd: fd, size: contents.validLength), contents)
    }

    /// Appends `bytes`; with `sync`, fsyncs before returning.
    func append(_ bytes: [UInt8], sync: Bool) throws(SystemError) {
        do {
            try fd.writeAll(bytes)
            size += bytes.count
            if sync { try fd.sync() }
        } catch {
            throw error.located(at: path)
        }
    }

    /// Replaces the file with `pending` and the next sequence number,
    /// atomically (temporary file, fsync, rename, fsync of the directory).
    func compact(pending: [OutboxEntry], nextSeq: Int64) throws(SystemError) {
        let bytes = OutboxLog.nextLine(nextSeq) + pending.flatMap(OutboxLog.enqueueLine)
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        try AtomicFile.replace(path, with: bytes, temporary: "\(path).compact")
        try AtomicFile.syncDirectory(directory)
        let reopened = try FileDescriptor.open(path, .readWrite, options: [.append])
        fd.close()
        fd = reopened
        size = bytes.count
    }
}
