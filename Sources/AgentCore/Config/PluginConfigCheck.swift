import JSON
import RoleKit

/// Checks the configured roles' plugins without starting them: each plugin
/// is loaded (trust, ELF and descriptor checks included) and its
/// ``PluginDescriptor/validateConfig`` run on its `config`. Problems come
/// back as config issues with full paths (`roles.central.config.margin`), in
/// the shape the agent reports its own.
public enum PluginConfigCheck {
    /// What was checked for one role.
    public struct Checked: Sendable, Hashable {
        /// The role.
        public var role: AgentConfig.Role
        /// The plugin's name.
        public var plugin: String
        /// Whether the plugin checked its config (it declares a check).
        public var configChecked: Bool
    }

    /// Checks `roles` of `config` (every configured role when nil): the
    /// problems found (a plugin that cannot be loaded is one, unless
    /// `loadFailures` is false), and what was checked.
    public static func run(
        _ config: AgentConfig, roles only: [AgentConfig.Role]? = nil, loader: PluginLoader, loadFailures: Bool = true
    ) -> (issues: [ConfigIssue], checked: [Checked]) {
        var issues: [ConfigIssue] = []
        var checked: [Checked] = []
        for role in only ?? AgentConfig.Role.allCases {
            guard let settings = config.roles[role] else { continue }
            let descriptor: PluginDescriptor
            do {
                descriptor = try loader.load(
                    name: settings.plugin, role: RoleHost.pluginRole(role), from: config.pluginDirectory)
            } catch {
                if loadFailures {
                    issues.append(ConfigIssue(path: "roles.\(role.rawValue).plugin", message: "\(error)"))
                }
                continue
            }
            let problems = descriptor.validateConfig?(settings.config, RoleHost.pluginRole(role)) ?? []
            issues += problems.map { ConfigIssue(path: path(role, $0.path), message: $0.message) }
            checked.append(
                Checked(role: role, plugin: settings.plugin, configChecked: descriptor.validateConfig != nil))
        }
        return (issues, checked)
    }

    /// `roles.<role>.config` followed by the path inside the plugin's config.
    static func path(_ role: AgentConfig.Role, _ inside: String) -> String {
        let base = "roles.\(role.rawValue).config"
        if inside.isEmpty { return base }
        return inside.hasPrefix("[") ? base + inside : "\(base).\(inside)"
    }

    /// The plugin's config problems as one sentence: `config.margin: ...; config.dwell: ...`.
    static func sentence(_ problems: [JSONFieldError]) -> String {
        problems.map { ($0.path.isEmpty ? "config" : "config.\($0.path)") + ": \($0.message)" }
            .joined(separator: "; ")
    }
}
