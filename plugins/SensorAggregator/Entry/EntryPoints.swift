// The two C entry points the agent looks up (docs/plugins.md). They live in a target of
// their own so that the test bundle, which links the plugin logic of several plugins,
// holds no two definitions of the same C symbol.
import RoleKit
import SensorAggregator

/// The ABI version this plugin was compiled against; read by the agent first.
@c(bleagent_plugin_abi_version)
public func sensorAggregatorABIVersion() -> UInt32 { PluginABI.version }

/// The plugin's descriptor, retained once for the agent.
@c(bleagent_plugin_descriptor)
public func sensorAggregatorDescriptor() -> UnsafeMutableRawPointer {
    PluginDescriptor(
        name: "SensorAggregator", namespace: "sensors", roles: [.peripheral],
        summary:
            "IoT gateway node: sensor files, an ingest socket and simulated sources served over ESS, Battery, Device Information, an Aggregates service and BTHome advertising",
        validateConfig: PluginDescriptor.checking(SensorAggregatorConfig.init(json:))
    ) { context in
        try makeSensorAggregatorPlugin(context: context)
    }.exported()
}
