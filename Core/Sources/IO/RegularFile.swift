#if canImport(Glibc)
    import Glibc
#endif

/// Reads of configured paths (a config file, a sensor attribute, a state file) that refuse anything but a regular
/// file before it could block: a FIFO would wait for a writer for ever, a device may never end. Blocking calls:
/// run them on a ``BlockingPool`` (the `async` variants do).
public enum RegularFile {
    /// The bytes of the regular file at `path` (symbolic links followed).
    /// - Throws: ``SystemError``: the file is missing or unreadable, is not a regular file (``SystemError/detail``
    ///   says what it is), or holds more than `limit` bytes (`EFBIG`).
    public static func read(_ path: String, limit: Int) throws(SystemError) -> [UInt8] {
        try checkRegular(path)
        let fd = try FileDescriptor.open(path, .readOnly, options: [.nonBlocking, .noControllingTerminal])
        defer { fd.close() }
        let status = try fd.status()
        if let kind = kind(of: status.st_mode) { throw .notRegularFile(path, kind: kind) }
        do {
            return try fd.readToEnd(limit: limit)
        } catch {
            throw error.located(at: path)
        }
    }

    /// ``read(_:limit:)``, or `nil` when nothing is at `path`.
    public static func readIfPresent(_ path: String, limit: Int) throws(SystemError) -> [UInt8]? {
        do {
            return try read(path, limit: limit)
        } catch  where error.errno == .noSuchFile {
            return nil
        }
    }

    /// ``read(_:limit:)`` on `pool`.
    public static func read(_ path: String, limit: Int, on pool: BlockingPool) async throws(SystemError) -> [UInt8] {
        try await pool.run { () throws(SystemError) in try read(path, limit: limit) }
    }

    /// Throws unless `path` names a regular file (after symbolic links).
    public static func checkRegular(_ path: String) throws(SystemError) {
        var status = stat()
        // Named `open`: a missing file is what opening it would report.
        try systemCall("open", path: path) { stat(path, &status) }
        if let kind = kind(of: status.st_mode) { throw .notRegularFile(path, kind: kind) }
    }

    /// What a file of `mode` is, when it is not a regular file ("a FIFO", "a character device", ...).
    static func kind(of mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: nil
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        case S_IFDIR: "a directory"
        case S_IFLNK: "a symbolic link"
        default: "not a regular file"
        }
    }
}

/// Replacing a file so that a reader (or the next start after a crash, even SIGKILL or power loss) finds the old
/// content or the new one, never a part: write a temporary file, fsync it, rename it over the old one, fsync the
/// directory. Blocking calls: the restoration store and the plugin state store run them on a ``BlockingPool``.
public enum AtomicFile {
    /// Writes `bytes` to `temporary` (mode 0600), fsyncs it and renames it onto `path`. `temporary` must be in
    /// `path`'s directory; it is removed when a step fails. Call ``syncDirectory(_:)`` afterwards to make the rename
    /// durable.
    public static func replace(_ path: String, with bytes: [UInt8], temporary: String) throws(SystemError) {
        let fd = try FileDescriptor.open(temporary, .writeOnly, options: [.create, .truncate])
        do throws(SystemError) {
            try fd.writeAll(bytes)
            try fd.sync()
        } catch {
            fd.close()
            unlink(temporary)
            throw error.located(at: temporary)
        }
        fd.close()
        do {
            try systemCall("rename", path: path) { rename(temporary, path) }
        } catch {
            unlink(temporary)
            throw error
        }
    }

    /// fsyncs `directory`, so that a rename in it survives a power loss.
    public static func syncDirectory(_ directory: String) throws(SystemError) {
        let fd = try FileDescriptor.open(directory, .readOnly, options: [.directory])
        defer { fd.close() }
        do {
            try fd.sync()
        } catch {
            throw error.located(at: directory)
        }
    }
}
