import RoleKit

/// Makes the plugin for the agent; called by the descriptor's factory in the
/// entry-point target (plugins/SensorGateway/Entry).
public func makeSensorGatewayPlugin(context: RoleContext) throws -> any RolePlugin {
    try SensorGatewayPlugin(context: context)
}
