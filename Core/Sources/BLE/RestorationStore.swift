import IO
import JSON

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

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
/// thrown away and not fatal. Every call blocks on the disk: the managers run them on the ``BlockingPool``.
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

    /// The largest state file read back (far above what thousands of peripherals need).
    public static let maximumBytes = 16 << 20

    /// Writes `state` atomically and durably.
    public func save(_ state: RestorationState) throws(SystemError) {
        let text = state.json.serialized(.pretty) + "\n"
        try AtomicFile.replace(path, with: Array(text.utf8), temporary: path + ".tmp")
        try AtomicFile.syncDirectory(directory)
    }

    /// Reads the state back. A missing file is ``RestorationLoad/empty``; a
    /// corrupt one is moved aside and reported as ``RestorationLoad/corrupt(reason:preservedAt:)``.
    public func load() throws(SystemError) -> RestorationLoad {
        guard let data = try RegularFile.readIfPresent(path, limit: Self.maximumBytes) else { return .empty }
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
    public func remove() throws(SystemError) {
        if unlink(path) != 0 && errno != ENOENT { throw .current("unlink", path: path) }
        try AtomicFile.syncDirectory(directory)
    }

    private func moveAside() throws(SystemError) -> String {
        var index = 1
        while true {
            let target = "\(path).corrupt-\(index)"
            if access(target, F_OK) != 0 {
                try systemCall("rename", path: target) { rename(path, target) }
                try AtomicFile.syncDirectory(directory)
                return target
            }
            index += 1
        }
    }
}
