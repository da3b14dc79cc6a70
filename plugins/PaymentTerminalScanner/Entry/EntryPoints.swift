import PaymentTerminalScanner
// The two C entry points the agent looks up (docs/plugins.md). They live in a target of
// their own so that the test bundle, which links the plugin logic of several plugins,
// holds no two definitions of the same C symbol.
import RoleKit

/// The ABI version this plugin was compiled against; read by the agent first.
@c(bleagent_plugin_abi_version)
public func paymentTerminalScannerABIVersion() -> UInt32 { PluginABI.version }

/// The plugin's descriptor, retained once for the agent.
@c(bleagent_plugin_descriptor)
public func paymentTerminalScannerDescriptor() -> UnsafeMutableRawPointer {
    PluginDescriptor(
        name: "PaymentTerminalScanner", namespace: "pos", roles: [.central],
        summary: "a point-of-sale lane: finds the nearest payment terminal and charges payments on it (pos.*)",
        validateConfig: PluginDescriptor.checking(ScannerConfig.init(json:))
    ) { context in
        try makePaymentTerminalScannerPlugin(context: context)
    }.exported()
}
