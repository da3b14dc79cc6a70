import RoleKit

/// Makes the plugin for the agent; called by the descriptor's factory in the
/// entry-point target (plugins/PaymentTerminalScanner/Entry).
public func makePaymentTerminalScannerPlugin(context: RoleContext) throws -> any RolePlugin {
    try PaymentTerminalScannerPlugin(context: context)
}
