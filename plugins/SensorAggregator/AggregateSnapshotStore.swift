import Glibc
import IO
import RoleKit

/// Saves and loads the aggregates snapshot in the plugin's state directory.
///
/// Saving goes through ``PluginStateStore/write(_:_:)`` (temporary file,
/// fsync, rename, fsync of the directory, on the blocking pool), so a reader
/// sees the previous snapshot or the new one. A snapshot that cannot be read at start-up is
/// renamed aside (`aggregates.json.corrupt-<unix time>`), logged, and the
/// plugin starts empty: it never crashes on it and never deletes it.
public struct AggregateSnapshotStore: Sendable {
    /// The snapshot's file name in the state directory.
    public static let fileName = "aggregates.json"

    /// The state directory.
    public let store: PluginStateStore
    private let logger: PluginLogger

    /// A store in `store`'s directory, logging to `logger`.
    public init(store: PluginStateStore, logger: PluginLogger) {
        self.store = store
        self.logger = logger
    }

    /// Writes the snapshot of `state` atomically and durably.
    /// Saves made one after the other (by one actor) are written in that order.
    nonisolated(nonsending) public func save(_ state: AggregateState, now: Double) async throws(PluginStateError) {
        try await store.write(Self.fileName, AggregateSnapshot.encode(state, now: now))
    }

    /// Restores `state` from the snapshot, if there is a readable one.
    public func load(into state: inout AggregateState, now: Double) async -> SnapshotLoadOutcome {
        let bytes: [UInt8]
        do {
            guard let found = try await store.read(Self.fileName) else { return .noSnapshot }
            bytes = found
        } catch {
            logger.error("cannot read the aggregates snapshot: \(error); starting empty")
            return .unreadable(reason: error.description)
        }
        do {
            let skipped = try AggregateSnapshot.restore(bytes, into: &state, now: now)
            if !skipped.isEmpty {
                logger.info("snapshot sensors no longer configured were skipped: \(skipped.joined(separator: ", "))")
            }
            return .restored(skippedSensors: skipped)
        } catch {
            let reason = error.description
            return await BlockingPool.shared.run { setAside(reason: reason, now: now) }
        }
    }

    private func setAside(reason: String, now: Double) -> SnapshotLoadOutcome {
        let source = "\(store.directory)/\(Self.fileName)"
        let stamp = Int64(now.isFinite ? now : 0)
        for attempt in 0..<100 {
            let name = "\(Self.fileName).corrupt-\(stamp)\(attempt == 0 ? "" : "-\(attempt)")"
            let target = "\(store.directory)/\(name)"
            if access(target, F_OK) == 0 { continue }
            if rename(source, target) == 0 {
                logger.error("aggregates snapshot unreadable (\(reason)); set aside as \(name), starting empty")
                return .setAside(name: name, reason: reason)
            }
            let code = errno
            let why = String(cString: strerror(code))
            logger.error("aggregates snapshot unreadable (\(reason)) and cannot be set aside (\(why)); starting empty")
            return .unreadable(reason: "\(reason); rename failed: \(why)")
        }
        logger.error("aggregates snapshot unreadable (\(reason)); too many set-aside copies, starting empty")
        return .unreadable(reason: reason)
    }
}

/// What loading the snapshot found.
public enum SnapshotLoadOutcome: Sendable, Hashable {
    /// No snapshot yet (a first start).
    case noSnapshot
    /// The windows were restored; sensors the config no longer has were skipped.
    case restored(skippedSensors: [String])
    /// The snapshot could not be read and was renamed to `name` in the state
    /// directory; the plugin starts empty.
    case setAside(name: String, reason: String)
    /// The snapshot could not be read and is still in place: the plugin
    /// starts empty and must not flush over it (that would destroy it).
    case unreadable(reason: String)

    /// Whether flushing may replace the snapshot file.
    public var mayFlush: Bool {
        if case .unreadable = self { return false }
        return true
    }
}

/// When the next snapshot is due: at most ``interval`` seconds after the
/// first change since the last flush, so a SIGKILL loses at most that much.
public struct FlushSchedule: Sendable, Hashable {
    /// Seconds between flushes.
    public var interval: Double
    /// When the last flush happened (or the schedule started).
    public private(set) var lastFlush: Double
    /// Whether something changed since the last flush.
    public private(set) var isDirty = false

    /// A schedule flushing every `interval` seconds, starting at `now`.
    public init(interval: Double, now: Double) {
        self.interval = interval
        self.lastFlush = now
    }

    /// Notes a change that the next flush must save.
    public mutating func markDirty() { isDirty = true }

    /// When the next flush is due, or nil when nothing changed.
    public var nextDeadline: Double? { isDirty ? lastFlush + interval : nil }

    /// Whether a flush is due at `now`.
    public func isDue(now: Double) -> Bool { nextDeadline.map { now >= $0 } ?? false }

    /// Records a successful flush at `now`.
    public mutating func flushed(at now: Double) {
        lastFlush = now
        isDirty = false
    }
}
