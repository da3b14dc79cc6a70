import RoleKit

/// One line for the agent's log, before formatting.
public struct LogEntry: Sendable, Hashable {
    /// How important it is.
    public var level: LogLevel
    /// The plugin that wrote it, or nil for the agent's own lines.
    public var plugin: String?
    /// The text, which may hold strings from outside: the writer escapes it.
    public var message: String

    /// An entry.
    public init(level: LogLevel, plugin: String? = nil, message: String) {
        self.level = level
        self.plugin = plugin
        self.message = message
    }
}

/// Where the agent's parts write log lines: a value wrapping the writer, so
/// parts and tests choose where lines go (``LogWriter`` for standard error,
/// ``discard`` or a recorder in tests).
public struct AgentLog: Sendable {
    private let sink: @Sendable (LogEntry) -> Void

    /// A log handing each entry to `sink`.
    public init(_ sink: @escaping @Sendable (LogEntry) -> Void) { self.sink = sink }

    /// A log that drops everything.
    public static let discard = AgentLog { _ in }

    /// Writes `message` at `level`.
    public func log(_ level: LogLevel, _ message: String) { sink(LogEntry(level: level, message: message)) }
    /// Writes at ``LogLevel/debug``.
    public func debug(_ message: String) { log(.debug, message) }
    /// Writes at ``LogLevel/info``.
    public func info(_ message: String) { log(.info, message) }
    /// Writes at ``LogLevel/notice``.
    public func notice(_ message: String) { log(.notice, message) }
    /// Writes at ``LogLevel/warning``.
    public func warning(_ message: String) { log(.warning, message) }
    /// Writes at ``LogLevel/error``.
    public func error(_ message: String) { log(.error, message) }

    /// Writes a plugin's line at the agent level matching `level`.
    public func plugin(_ name: String, _ level: PluginLogLevel, _ message: String) {
        let agentLevel: LogLevel =
            switch level {
            case .debug: .debug
            case .info: .info
            case .warning: .warning
            case .error: .error
            }
        sink(LogEntry(level: agentLevel, plugin: name, message: message))
    }
}
