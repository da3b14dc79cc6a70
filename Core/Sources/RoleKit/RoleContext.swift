import BLE
import JSON

/// Everything a plugin instance is given for one start: its role, its config,
/// a logger, a state store, the agent's control API and event stream, and the
/// BLE manager of its role.
///
/// The agent builds it; the plugin keeps it for its lifetime.
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
    /// The role's BLE manager, as the agent made it.
    public let manager: RoleManager
    /// The agent's MQTT side: durable records, sensor readings (``NoFleet``
    /// without a fleet section).
    public let fleet: any FleetPublisher

    /// A context (built by the agent, or by a test harness). `manager`
    /// must match `role` (``RoleManager/none`` for a harness without BLE).
    public init(
        role: PluginRole, config: JSON, logger: PluginLogger, state: PluginStateStore,
        methods: any PluginMethodRegistrar, events: any PluginEventSink, manager: RoleManager = .none,
        fleet: any FleetPublisher = NoFleet()
    ) {
        self.role = role
        self.config = config
        self.logger = logger
        self.state = state
        self.methods = methods
        self.events = events
        self.manager = manager
        self.fleet = fleet
    }

    /// The central manager, in the central role.
    ///
    /// - Throws: ``RoleContextError/wrongRole(_:)`` in the peripheral role,
    ///   ``RoleContextError/noManager`` when the agent gave none.
    public func central() throws(RoleContextError) -> CentralManager {
        switch manager {
        case .central(let central): return central
        case .peripheral: throw .wrongRole(role)
        case .none: throw .noManager
        }
    }

    /// The peripheral manager, in the peripheral role.
    ///
    /// - Throws: ``RoleContextError/wrongRole(_:)`` in the central role,
    ///   ``RoleContextError/noManager`` when the agent gave none.
    public func peripheral() throws(RoleContextError) -> PeripheralManager {
        switch manager {
        case .peripheral(let peripheral): return peripheral
        case .central: throw .wrongRole(role)
        case .none: throw .noManager
        }
    }
}

/// The BLE manager of one role: a plugin gets exactly the one for its role.
public enum RoleManager: Sendable {
    /// The central role's manager.
    case central(CentralManager)
    /// The peripheral role's manager.
    case peripheral(PeripheralManager)
    /// No BLE (a test harness).
    case none
}

/// Asking a ``RoleContext`` for the wrong role's manager.
public enum RoleContextError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The plugin runs in this role, which has the other manager.
    case wrongRole(PluginRole)
    /// The agent gave this context no BLE manager.
    case noManager

    /// One sentence.
    public var description: String {
        switch self {
        case .wrongRole(let role):
            "a plugin in the \(role) role has only the \(role) manager; the other role's manager is not available"
        case .noManager: "this context has no BLE manager"
        }
    }
}
