import JSON

/// Everything a plugin instance is given for one start: its role, its config,
/// a logger, a state store, and the agent's control API and event stream.
///
/// The agent builds it; the plugin keeps it for its lifetime.
///
/// **Extension point for the BLE API.** The BLE managers for the role (a
/// `CentralManager` for ``PluginRole/central``, a `PeripheralManager` for
/// ``PluginRole/peripheral``) join this struct as new stored properties when
/// the `BLE` module lands in the core; that change bumps
/// ``PluginABI/version``. Until then a plugin has no BLE access, and nothing
/// here pretends to offer it.
public struct RoleContext: Sendable {
    /// The role this instance runs in (a plugin may serve both).
    public let role: PluginRole
    /// The plugin's own config (`roles.<role>.config`), unread by the agent;
    /// an object, empty if the config has none.
    public let config: JSON
    /// Writes to the agent's log under the plugin's name.
    public let logger: PluginLogger
    /// The plugin's own state directory.
    public let state: PluginStateStore
    /// Adds control methods under the plugin's namespace.
    public let methods: any PluginMethodRegistrar
    /// Publishes `plugin` events.
    public let events: any PluginEventSink

    /// A context (built by the agent, or by a test harness).
    public init(
        role: PluginRole, config: JSON, logger: PluginLogger, state: PluginStateStore,
        methods: any PluginMethodRegistrar, events: any PluginEventSink
    ) {
        self.role = role
        self.config = config
        self.logger = logger
        self.state = state
        self.methods = methods
        self.events = events
    }
}
