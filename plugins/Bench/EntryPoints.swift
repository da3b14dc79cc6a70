// The two C entry points the agent looks up (docs/plugins.md).
import RoleKit

/// The ABI version this plugin was compiled against; read by the agent first.
@c(bleagent_plugin_abi_version)
public func benchABIVersion() -> UInt32 { PluginABI.version }

/// The plugin's descriptor, retained once for the agent.
@c(bleagent_plugin_descriptor)
public func benchDescriptor() -> UnsafeMutableRawPointer {
    PluginDescriptor(
        name: "Bench", namespace: "bench", roles: [.central, .peripheral],
        summary:
            "blebench's load through the plugin API: scan counting, notifications and writes without response between two agents, with latencies"
    ) { context in
        BenchPlugin(context: context)
    }.exported()
}
