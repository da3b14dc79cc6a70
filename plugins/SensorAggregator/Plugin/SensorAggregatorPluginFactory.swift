import RoleKit

/// Makes the plugin for the agent; called by the descriptor's factory in the
/// entry-point target (plugins/SensorAggregator/Entry).
public func makeSensorAggregatorPlugin(context: RoleContext) throws -> any RolePlugin {
    try SensorAggregatorPlugin(context: context)
}
