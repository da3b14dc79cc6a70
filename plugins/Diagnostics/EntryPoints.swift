// The two C entry points the agent looks up (docs/plugins.md).
import JSON
import RoleKit

/// The ABI version this plugin was compiled against; read by the agent first.
@c(bleagent_plugin_abi_version)
public func diagnosticsABIVersion() -> UInt32 { PluginABI.version }

/// The plugin's descriptor, retained once for the agent.
@c(bleagent_plugin_descriptor)
public func diagnosticsDescriptor() -> UnsafeMutableRawPointer {
    PluginDescriptor(
        name: "Diagnostics", namespace: "diag", roles: [.central, .peripheral],
        summary:
            "checks the plugin path end to end: diag.ping, diag.echo, diag.ble (the role's BLE manager) and a heartbeat event",
        validateConfig: PluginDescriptor.checking(DiagnosticsConfig.init(json:))
    ) { context in
        try DiagnosticsPlugin(context: context)
    }.exported()
}
