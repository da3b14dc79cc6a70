/// How important a log line is, from least to most (docs/logging.md says
/// what the agent writes at each level). Lines below the configured level
/// (`bleagent --log-level`, default `info`) are not written.
public enum LogLevel: Int, Sendable, Hashable, CaseIterable, Comparable {
    /// Detail for debugging, including payment details (amounts, references, auth codes).
    case debug
    /// Normal operation: start, stop, role transitions, reloads, what plugins do.
    case info
    /// Normal but significant: refused control connections.
    case notice
    /// Something went wrong and was handled: a rejected reload, a failed role.
    case warning
    /// Something the agent or a plugin could not handle.
    case error

    /// The level's name: `debug`, `info`, `notice`, `warning`, `error`.
    public var name: String {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        }
    }

    /// The level called `name`.
    public init?(name: String) {
        guard let level = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = level
    }

    /// The syslog priority (`LOG_DEBUG` 7 ... `LOG_ERR` 3) journald reads from a `<N>` prefix.
    public var syslogPriority: Int {
        switch self {
        case .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        }
    }

    /// Orders by importance.
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}
