/// How important a log line is.
public enum PluginLogLevel: String, Sendable, Hashable, CaseIterable {
    /// Detail for debugging.
    case debug
    /// Normal operation.
    case info
    /// Something unexpected the plugin handled.
    case warning
    /// Something the plugin could not handle.
    case error
}

/// A plugin's logger: lines go to the agent's log, prefixed with the plugin's name.
public struct PluginLogger: Sendable {
    private let sink: @Sendable (PluginLogLevel, String) -> Void

    /// A logger writing through `sink`.
    public init(_ sink: @escaping @Sendable (PluginLogLevel, String) -> Void) {
        self.sink = sink
    }

    /// Logs `message` at `level`.
    public func log(_ level: PluginLogLevel, _ message: String) { sink(level, message) }
    /// Logs at ``PluginLogLevel/debug``.
    public func debug(_ message: String) { sink(.debug, message) }
    /// Logs at ``PluginLogLevel/info``.
    public func info(_ message: String) { sink(.info, message) }
    /// Logs at ``PluginLogLevel/warning``.
    public func warning(_ message: String) { sink(.warning, message) }
    /// Logs at ``PluginLogLevel/error``.
    public func error(_ message: String) { sink(.error, message) }
}
