// The two C entry points the agent looks up (docs/plugins.md), in a target of
// their own so that the test bundle, which links the plugin logic of several
// plugins, holds no two definitions of the same C symbol.
import RoleKit
import SensorGateway

/// The ABI version this plugin was compiled against; read by the agent first.
@c(bleagent_plugin_abi_version)
public func sensorGatewayABIVersion() -> UInt32 { PluginABI.version }

/// The plugin's descriptor, retained once for the agent.
@c(bleagent_plugin_descriptor)
public func sensorGatewayDescriptor() -> UnsafeMutableRawPointer {
    PluginDescriptor(
        name: "SensorGateway", namespace: "gateway", roles: [.central],
        summary: "a BLE sensor gateway: decodes BTHome, iBeacon and Eddystone advertisements around it (gateway.*)",
        validateConfig: PluginDescriptor.checking(GatewayConfig.init(json:))
    ) { context in
        try makeSensorGatewayPlugin(context: context)
    }.exported()
}
