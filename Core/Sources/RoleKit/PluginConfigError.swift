import JSON

/// A problem with a plugin's own config (`roles.<role>.config`), named by its
/// field path inside that object. Thrown from ``RolePlugin/start()``; the agent
/// reports it as the reason the role failed.
public struct PluginConfigError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The dotted field path inside the plugin's config (`heartbeatSeconds`).
    public var path: String
    /// What is wrong.
    public var message: String

    /// An error for `path`.
    public init(path: String, _ message: String) {
        self.path = path
        self.message = message
    }

    /// The problem `error` found by a ``JSONFieldReader`` over the plugin's config.
    public init(_ error: JSONFieldError) {
        self.init(path: error.path, error.message)
    }

    /// `config.PATH: message`.
    public var description: String { "config.\(path): \(message)" }
}
