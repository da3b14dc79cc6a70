// Test fixture: a plugin whose extra C entry points hand core values and type
// identities created inside the plugin to the test, and whose methods throw
// core error types, to prove that the plugin and the agent share one copy of
// the core (docs/ARCHITECTURE.md, the one-copy rule).
import GATT
import JSON
import RoleKit

final class OneCopyProbe: RolePlugin {
    private let context: RoleContext

    init(context: RoleContext) { self.context = context }

    func start() async throws {
        try context.methods.register("probe.fail", params: .none) { _ in
            throw PluginMethodError(code: 4242, "probe failure", data: ["from": "plugin"])
        }
        try context.methods.register("probe.parse", params: .none) { _ in
            try JSON(parsing: Array("{\"unterminated\":".utf8))
        }
        context.events.emit("started", ["role": .string(context.role.rawValue)])
    }

    func stop() async {}
}

/// This build's ABI version.
@c(bleagent_plugin_abi_version)
public func oneCopyProbeABIVersion() -> UInt32 { PluginABI.version }

/// The probe's descriptor.
@c(bleagent_plugin_descriptor)
public func oneCopyProbeDescriptor() -> UnsafeMutableRawPointer {
    PluginDescriptor(name: "OneCopyProbe", namespace: "probe", roles: [.central, .peripheral]) { context in
        OneCopyProbe(context: context)
    }.exported()
}

/// Core values made in the plugin, boxed as `[Any]` (retained once).
@c(onecopy_probe_values)
public func oneCopyProbeValues() -> UnsafeMutableRawPointer {
    let values: [Any] = [BluetoothUUID.heartRate, PluginRole.peripheral, JSON.array([1, "two"])]
    return Unmanaged.passRetained(values as AnyObject).toOpaque()
}

/// The identities of core types' metadata as the plugin sees them, boxed as
/// `[ObjectIdentifier]` (retained once).
@c(onecopy_probe_type_identities)
public func oneCopyProbeTypeIdentities() -> UnsafeMutableRawPointer {
    let identities = [
        ObjectIdentifier(PluginDescriptor.self), ObjectIdentifier(BluetoothUUID.self), ObjectIdentifier(JSON.self),
    ]
    return Unmanaged.passRetained(identities as AnyObject).toOpaque()
}
