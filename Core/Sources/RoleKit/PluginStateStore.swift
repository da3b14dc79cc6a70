import IO
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A plugin's own directory for data that must survive restarts (a journal,
/// aggregates): `<restore.stateDirectory>/plugins/<plugin name>`, created by
/// the agent with mode 0700. Writes are atomic: a reader sees the old file or
/// the new one, never a part (temporary file, fsync, rename, fsync of the
/// directory).
///
/// Reads and writes run on the process's ``BlockingPool`` and are awaited:
/// the disk never blocks a thread of Swift's cooperative pool (or the
/// plugin's actor, which stays free for other work meanwhile). Writes of one
/// file run one at a time, in the order they were asked for, the latest
/// winning: writes asked for while one runs fold into the next.
public struct PluginStateStore: Sendable, Hashable {
    /// The directory's absolute path.
    public let directory: String

    /// The largest state file read back.
    public static let maximumBytes = 64 << 20

    /// A store over `directory` (which must exist).
    public init(directory: String) {
        self.directory = directory
    }

    /// The contents of the file `name`, or `nil` if it does not exist (a
    /// FIFO or a device there is refused: only regular files are read).
    public func read(_ name: String) async throws(PluginStateError) -> [UInt8]? {
        let path = try self.path(of: name)
        do {
            return try await BlockingPool.shared.run { () throws(SystemError) in
                try RegularFile.readIfPresent(path, limit: Self.maximumBytes)
            }
        } catch {
            throw .system(error)
        }
    }

    /// Replaces the file `name` with `bytes`, atomically and durably; returns
    /// once these bytes (or ones written after them) are on disk. Writes made
    /// one after the other (by one actor) reach the disk in that order.
    nonisolated(nonsending) public func write(_ name: String, _ bytes: [UInt8]) async throws(PluginStateError) {
        let path = try self.path(of: name)
        do {
            try await Self.writer(for: path, in: directory).save(bytes)
        } catch {
            throw .system(error)
        }
    }

    /// The one writer of each state file (a handful per plugin, kept for the process's life).
    private static let writers = Mutex<[String: CoalescingWriter<[UInt8]>]>([:])

    private static func writer(for path: String, in directory: String) -> CoalescingWriter<[UInt8]> {
        writers.withLock { writers in
            if let writer = writers[path] { return writer }
            let temporary = path.replacingLastComponent { ".\($0).tmp-\(getpid())" }
            let writer = CoalescingWriter<[UInt8]> { (bytes) throws(SystemError) in
                try AtomicFile.replace(path, with: bytes, temporary: temporary)
                // The rename is done; a directory that cannot be synced leaves it in the page cache only.
                try? AtomicFile.syncDirectory(directory)
            }
            writers[path] = writer
            return writer
        }
    }

    private func path(of name: String) throws(PluginStateError) -> String {
        guard !name.isEmpty, !name.contains("/"), !name.hasPrefix("."), !name.contains("\0") else {
            throw .badName(name)
        }
        return "\(directory)/\(name)"
    }
}

/// Why a state file could not be read or written.
public enum PluginStateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The name is not a plain file name (empty, has `/`, starts with `.`).
    case badName(String)
    /// A system call failed.
    case system(SystemError)

    /// One sentence.
    public var description: String {
        switch self {
        case .badName(let name): "\"\(name)\" is not a state file name (a plain name without / or a leading .)"
        case .system(let error): error.description
        }
    }
}

extension String {
    /// The path with its last component (after the last `/`) replaced by `transform(component)`.
    fileprivate func replacingLastComponent(_ transform: (Substring) -> String) -> String {
        guard let slash = lastIndex(of: "/") else { return transform(self[...]) }
        return String(self[...slash]) + transform(self[index(after: slash)...])
    }
}
