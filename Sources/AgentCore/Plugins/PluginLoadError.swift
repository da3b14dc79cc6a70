import RoleKit

/// Why a plugin could not be loaded. Each case names the file and says what
/// to do; none of them crashes the agent.
public enum PluginLoadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The configured name is not a bare plugin name.
    case badName(String)
    /// No file at the plugin's path.
    case fileMissing(path: String)
    /// The file, its directory or a directory above it could be changed by
    /// someone other than root or the agent's user (``PluginTrust``); `reason`
    /// names the path at fault.
    case untrusted(path: String, reason: String)
    /// The file is not a whole ELF shared object for this machine
    /// (``ELFCheck``): truncated, another architecture, not ELF at all.
    case malformed(path: String, reason: String)
    /// dlopen refused the file (not an ELF shared object, wrong architecture,
    /// an undefined symbol...); `reason` is dlerror's text.
    case notLoadable(path: String, reason: String)
    /// The library does not export a plugin entry point.
    case missingSymbol(path: String, symbol: String)
    /// The plugin was compiled against another plugin ABI.
    case abiMismatch(path: String, plugin: UInt32, agent: UInt32)
    /// The descriptor entry point returned null or an object that is not this
    /// core's ``PluginDescriptor`` (a plugin that links its own copy of the core).
    case notADescriptor(path: String)
    /// The descriptor's name differs from the configured name.
    case nameMismatch(path: String, declared: String, configured: String)
    /// The descriptor's namespace is malformed or reserved.
    case badNamespace(path: String, namespace: String)
    /// The plugin does not serve the role it was configured for.
    case wrongRole(path: String, serves: [PluginRole], wanted: PluginRole)

    /// One sentence naming the file and the problem.
    public var description: String {
        switch self {
        case .badName(let name): "\"\(name)\" is not a plugin name (a name, not a path)"
        case .fileMissing(let path): "no plugin file \(path)"
        case .untrusted(let path, let reason): "refusing to load \(path): \(reason)"
        case .malformed(let path, let reason):
            "\(path) is not a whole shared library for this machine: \(reason)"
                + " (install plugins atomically: copy to a temporary name in the same directory, then rename)"
        case .notLoadable(let path, let reason): "\(path) is not a loadable shared library: \(reason)"
        case .missingSymbol(let path, let symbol):
            "\(path) is not a bleagent plugin: it does not export \(symbol)"
        case .abiMismatch(let path, let plugin, let agent):
            "\(path) was built for plugin ABI version \(plugin), this agent has version \(agent): "
                + "rebuild the plugin against this agent's core"
        case .notADescriptor(let path):
            "\(path) returned no valid plugin descriptor (does it link its own copy of the core?)"
        case .nameMismatch(let path, let declared, let configured):
            "\(path) is the plugin \"\(declared)\", not \"\(configured)\""
        case .badNamespace(let path, let namespace):
            "\(path) declares the namespace \"\(namespace)\", which is reserved or not a lower-case identifier"
        case .wrongRole(let path, let serves, let wanted):
            "\(path) serves the \(serves.map(\.rawValue).joined(separator: " and ")) role"
                + "\(serves.count == 1 ? "" : "s") only, not \(wanted.rawValue)"
        }
    }
}
