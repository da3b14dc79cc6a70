// The two C entry points the agent looks up (docs/plugins.md).
import RoleKit
import VirtualPaymentTerminal

/// The ABI version this plugin was compiled against; read by the agent first.
@c(bleagent_plugin_abi_version)
public func virtualTerminalABIVersion() -> UInt32 { PluginABI.version }

/// The plugin's descriptor, retained once for the agent.
@c(bleagent_plugin_descriptor)
public func virtualTerminalDescriptor() -> UnsafeMutableRawPointer {
    PluginDescriptor(
        name: "VirtualPaymentTerminal", namespace: "terminal", roles: [.peripheral],
        summary:
            "a virtual payment terminal: the Payment Terminal Service answered by VirtualTerminal, statuses indicated, idempotency records persisted",
        validateConfig: PluginDescriptor.checking(VirtualTerminalConfig.init(json:))
    ) { context in
        try VirtualTerminalPlugin(context: context)
    }.exported()
}
