import BLE
import Glibc

/// A plugin's own directory for data that must survive restarts (a journal,
/// aggregates): `<restore.stateDirectory>/plugins/<plugin name>`, created by
/// the agent with mode 0700. Writes are atomic: a reader sees the old file or
/// the new one, never a part (temporary file, fsync, rename, fsync of the
/// directory).
public struct PluginStateStore: Sendable, Hashable {
    /// The directory's absolute path.
    public let directory: String

    /// A store over `directory` (which must exist).
    public init(directory: String) {
        self.directory = directory
    }

    /// The contents of the file `name`, or `nil` if it does not exist.
    public func read(_ name: String) throws(PluginStateError) -> [UInt8]? {
        let path = try self.path(of: name)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
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

    /// Replaces the file `name` with `bytes`, atomically and durably.
    public func write(_ name: String, _ bytes: [UInt8]) throws(PluginStateError) {
        let path = try self.path(of: name)
        let temporary = "\(directory)/.\(name).tmp-\(getpid())"
        do {
            try AtomicFile.replace(path, with: bytes, temporary: temporary)
        } catch {
            throw .system(operation: error.operation, path: error.path, errno: error.errno)
        }
        // The rename is done; a directory that cannot be synced leaves it in the page cache only.
        try? AtomicFile.syncDirectory(directory)
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
    case system(operation: String, path: String, errno: Int32)

    /// One sentence.
    public var description: String {
        switch self {
        case .badName(let name): "\"\(name)\" is not a state file name (a plain name without / or a leading .)"
        case .system(let operation, let path, let code):
            "\(operation) \(path): \(String(cString: strerror(code)))"
        }
    }
}
