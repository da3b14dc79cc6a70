/// Constants of the bleagent control API (docs/control-api.md): the version,
/// the default socket path and the names both sides agree on.
public enum ControlAPI {
    /// The version of the control API this build speaks. It changes only when
    /// a method, parameter, result or event changes incompatibly; additions
    /// (new methods, new optional fields) keep it. `agent.status` and
    /// `agent.hello` return it.
    public static let version: Int64 = 1

    /// The socket path used when neither the config, `--socket` nor
    /// `BLEAGENT_SOCKET` names one.
    public static let defaultSocketPath = "/run/bleagent/control.sock"

    /// The environment variable blectl reads the socket path from.
    public static let socketEnvironmentVariable = "BLEAGENT_SOCKET"

    /// The JSON-RPC notification method that carries an event to a subscriber.
    public static let eventMethod = "event"

    /// Namespaces the agent owns; plugins may not register methods in them.
    public static let reservedNamespaces: Set<String> = ["agent", "events", "central", "peripheral", "rpc", "fleet"]

    /// The namespace of a method name: the text before its first dot
    /// (`central` for `central.scan.start`), or `nil` if it has none.
    public static func namespace(of method: String) -> Substring? {
        guard let dot = method.firstIndex(of: "."), dot != method.startIndex else { return nil }
        return method[..<dot]
    }
}

/// The kinds of events the agent publishes to subscribers
/// (`events.subscribe`). Documented in docs/control-api.md, "Events".
public enum EventKind: String, Sendable, Hashable, CaseIterable {
    /// A central found an advertising peripheral (planned, BLE role host).
    case discovered
    /// A link came up (planned).
    case connected
    /// A link went down (planned).
    case disconnected
    /// A characteristic value arrived by read or notification (planned).
    case value
    /// The agent's state changed: started, reloaded, reload rejected, stopping.
    case state
    /// An event a role plugin published under its own namespace (planned).
    case plugin
}
