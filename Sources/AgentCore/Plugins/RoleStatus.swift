import BLE
import JSON

/// Where the role host is with the configured role.
public enum RolePhase: String, Sendable, Hashable, CaseIterable {
    /// No plugin runs (before the first start, or after a stop).
    case stopped
    /// The plugin is being loaded and started.
    case starting
    /// The plugin's start returned; it runs.
    case running
    /// The plugin runs, but its BLE manager is not fully serving: BlueZ
    /// refused to register the peripheral's GATT application or
    /// advertisement (and has not accepted it since); `reason` says which
    /// and why. Back to `running` once a registration succeeds.
    case degraded
    /// The plugin is being stopped.
    case stopping
    /// The plugin could not be loaded or started; `reason` says why. The
    /// agent lives on; a reload tries again.
    case failed
}

/// The role host's state as `agent.status` reports it (`roleState`).
public struct RoleStatus: Sendable, Hashable {
    /// The phase.
    public var phase: RolePhase
    /// The role the phase is about (nil before any start).
    public var role: AgentConfig.Role?
    /// The plugin's configured name.
    public var plugin: String?
    /// Why the role failed or is degraded, or a note on a stop that missed its deadline.
    public var reason: String?

    /// A status.
    public init(phase: RolePhase, role: AgentConfig.Role? = nil, plugin: String? = nil, reason: String? = nil) {
        self.phase = phase
        self.role = role
        self.plugin = plugin
        self.reason = reason
    }

    /// `{"state", "role", "plugin", "reason"?}` (docs/control-api.md).
    public var json: JSON {
        var object: JSONObject = [
            "state": .string(phase.rawValue), "role": role.map { .string($0.rawValue) } ?? .null,
            "plugin": plugin.map(JSON.string) ?? .null,
        ]
        if let reason { object["reason"] = .string(reason) }
        return .object(object)
    }

    /// This status with the registrations BlueZ refused taken into account:
    /// a running role with `failures` is degraded, their descriptions its reason.
    func degraded(by failures: [RegistrationFailure]) -> RoleStatus {
        guard phase == .running, !failures.isEmpty else { return self }
        var status = self
        status.phase = .degraded
        status.reason = failures.map(\.description).joined(separator: "; ")
        return status
    }
}
