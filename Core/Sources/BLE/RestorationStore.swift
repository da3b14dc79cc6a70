import JSON

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Why the restoration store could not read or write.
public struct RestorationStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The operation that failed (`open`, `write`, `fsync`, `rename`, ...).
    public var operation: String
    /// The file it was about.
    public var path: String
    /// The errno value.
    public var errno: Int32

    /// An error of `operation` on `path` with `errno`.
    public init(operation: String, path: String, errno: Int32) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    /// `operation path: strerror`.
    public var description: String {
        "\(operation) \(path): \(String(cString: strerror(errno)))"
    }
}

/// What ``RestorationStore/load()`` found.
public enum RestorationLoad: Hashable, Sendable {
    /// No state was stored yet.
    case empty
    /// The stored state.
    case restored(RestorationState)
    /// The file was unreadable JSON or not a valid state. It was moved aside
    /// to `preservedAt` (never deleted) and the manager starts empty.
    case corrupt(reason: String, preservedAt: String)
}

/// The file under a state directory that holds one manager's
/// ``RestorationState``: `<directory>/<restoreIdentifier>.json`.
///
/// Writes are atomic and durable: the JSON goes to a temporary file in the
/// same directory, which is fsynced, renamed over the old file, and the
/// directory is fsynced, so after a crash (even SIGKILL or power loss) the
/// file holds either the old or the new state, never a mix. A file that
/// cannot be read back is renamed to `<name>.corrupt-<n>` and reported, not
/// thrown away and not fatal.
public struct RestorationStore: Sendable {
    /// The state directory.
    public let directory: String
    /// The restore identifier (a file name stem: letters, digits, `-`, `_`, `.`).
    public let restoreIdentifier: String

    /// The store for `restoreIdentifier` under `directory`, which must exist.
    /// Returns nil when the identifier is empty or has other characters.
    public init?(directory: String, restoreIdentifier: String) {
        let allowed = restoreIdentifier.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                || "-_.".unicodeScalars
                    .contains($0)
        }
        guard allowed, !restoreIdentifier.isEmpty, !restoreIdentifier.hasPrefix(".") else { return nil }
        self.directory = directory
        self.restoreIdentifier = restoreIdentifier
    }

    /// The state file's path.
    public var path: String { directory + "/" + restoreIdentifier + ".json" }

    /// Writes `state` atomically and durably.
    public func save(_ state: RestorationState) throws(RestorationStoreError) {
        let text = state.json.serialized(.pretty) + "\n"
        do {
            try AtomicFile.replace(path, with: Array(text.utf8), temporary: path + ".tmp")
        } catch {
            throw RestorationStoreError(operation: error.operation, path: error.path, errno: error.errno)
        }
        try syncDirectory()
    }

    /// Reads the state back. A missing file is ``RestorationLoad/empty``; a
    /// corrupt one is moved aside and reported as ``RestorationLoad/corrupt(reason:preservedAt:)``.
    public func load() throws(RestorationStoreError) -> RestorationLoad {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return .empty }
            throw RestorationStoreError(operation: "open", path: path, errno: errno)
        }
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                let code = errno
                close(fd)
                throw RestorationStoreError(operation: "read", path: path, errno: code)
            }
            if count == 0 { break }
            data += buffer[0..<count]
        }
        close(fd)
        let reason: String
        do {
            let json = try JSON(parsing: String(decoding: data, as: UTF8.self))
            return .restored(try RestorationState(json: json))
        } catch let error as RestorationDecodeError {
            reason = error.description
        } catch {
            reason = "\(error)"
        }
        return .corrupt(reason: reason, preservedAt: try moveAside())
    }

    /// Removes the state file (the manager no longer has anything to restore).
    public func remove() throws(RestorationStoreError) {
        if unlink(path) != 0 && errno != ENOENT {
            throw RestorationStoreError(operation: "unlink", path: path, errno: errno)
        }
        try syncDirectory()
    }

    private func moveAside() throws(RestorationStoreError) -> String {
        var index = 1
        while true {
            let target = "\(path).corrupt-\(index)"
            if access(target, F_OK) != 0 {
                guard rename(path, target) == 0 else {
                    throw RestorationStoreError(operation: "rename", path: target, errno: errno)
                }
                try syncDirectory()
                return target
            }
            index += 1
        }
    }

    private func syncDirectory() throws(RestorationStoreError) {
        do {
            try AtomicFile.syncDirectory(directory)
        } catch {
            throw RestorationStoreError(operation: error.operation, path: error.path, errno: error.errno)
        }
    }
}
