import Glibc

/// Writes log entries at or above a level to standard error, one line each:
/// `bleagent: message` at info, `bleagent: LEVEL: message` at the other
/// levels, `bleagent: [Plugin] LEVEL: message` for a plugin's lines. Every
/// string is escaped (``LogText``). Under systemd (`JOURNAL_STREAM` set) each
/// line starts with its syslog priority (`<5>`), which journald reads as
/// the entry's priority.
public struct LogWriter: Sendable {
    /// The least important level written.
    public let threshold: LogLevel
    /// Whether lines carry the `<N>` priority prefix journald reads.
    public let journal: Bool

    /// A writer for lines at `threshold` and above.
    public init(threshold: LogLevel, journal: Bool) {
        self.threshold = threshold
        self.journal = journal
    }

    /// The log that writes here.
    public var log: AgentLog {
        let writer = self
        return AgentLog { writer.write($0) }
    }

    /// The line for `entry`, with its newline; nil below the threshold.
    public func line(_ entry: LogEntry) -> String? {
        guard entry.level >= threshold else { return nil }
        var line = journal ? "<\(entry.level.syslogPriority)>bleagent: " : "bleagent: "
        if let plugin = entry.plugin {
            line += "[\(LogText.escaped(plugin))] \(entry.level.name): "
        } else if entry.level != .info {
            line += "\(entry.level.name): "
        }
        return line + LogText.escaped(entry.message) + "\n"
    }

    /// Writes `entry` to standard error (nothing below the threshold). A
    /// failed write (a closed log reader) is dropped.
    public func write(_ entry: LogEntry) {
        guard let text = line(entry) else { return }
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }
}
