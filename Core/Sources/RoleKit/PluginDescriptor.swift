import JSON

/// What a plugin library declares about itself: its name, the namespace of
/// its control methods, the roles it serves and how to make an instance.
/// Returned by the plugin's `bleagent_plugin_descriptor` entry point (see
/// ``PluginABI``) and checked by the agent before anything is created.
public final class PluginDescriptor: Sendable {
    /// Makes a plugin instance for one start.
    public typealias Factory = @Sendable (RoleContext) throws -> any RolePlugin

    /// Checks the plugin's config (`roles.<role>.config`) for `role` without
    /// starting anything, and returns every problem with its path inside the
    /// config (empty: valid).
    public typealias ConfigValidator = @Sendable (_ config: JSON, _ role: PluginRole) -> [JSONFieldError]

    /// The ABI version the plugin was compiled against (``PluginABI/version``).
    public let abiVersion: UInt32
    /// The plugin's name; must equal the configured name (the file is `lib<name>.so`).
    public let name: String
    /// The namespace of the plugin's control methods and events (such as
    /// `diag`): a lower-case identifier, not one the agent reserves.
    public let namespace: String
    /// The roles the plugin can run in.
    public let roles: Set<PluginRole>
    /// One sentence for operators.
    public let summary: String
    /// Checks a config without starting the plugin: `bleagent
    /// --check-config` and every start and reload run it first, so each
    /// problem is reported with its path before anything changes. `nil`: the
    /// plugin checks its config only when it starts.
    public let validateConfig: ConfigValidator?
    /// Makes an instance.
    public let factory: Factory

    /// A descriptor for this build's ABI.
    public init(
        name: String, namespace: String, roles: Set<PluginRole>, summary: String = "",
        validateConfig: ConfigValidator? = nil, factory: @escaping Factory
    ) {
        self.abiVersion = PluginABI.version
        self.name = name
        self.namespace = namespace
        self.roles = roles
        self.summary = summary
        self.validateConfig = validateConfig
        self.factory = factory
    }

    /// A config check that reads the config with `parse` (the plugin's own
    /// config type, which reports every problem as ``JSONFieldErrors``):
    /// `validateConfig: PluginDescriptor.checking(MyConfig.init(json:))`.
    public static func checking<Config>(
        _ parse: @escaping @Sendable (JSON) throws(JSONFieldErrors) -> Config
    ) -> ConfigValidator {
        { config, _ in
            do throws(JSONFieldErrors) {
                _ = try parse(config)
                return []
            } catch {
                return error.errors
            }
        }
    }

    /// The descriptor as the `bleagent_plugin_descriptor` entry point returns
    /// it: an opaque pointer holding one retained reference, which the agent
    /// takes over.
    public func exported() -> UnsafeMutableRawPointer {
        Unmanaged.passRetained(self).toOpaque()
    }
}
