// Test fixture: a valid plugin that serves the peripheral role only.
import RoleKit

final class PeripheralOnly: RolePlugin {
    func start() async throws {}
    func stop() async {}
}

/// This build's ABI version.
@c(bleagent_plugin_abi_version)
public func peripheralOnlyABIVersion() -> UInt32 { PluginABI.version }

/// A peripheral-only descriptor.
@c(bleagent_plugin_descriptor)
public func peripheralOnlyDescriptor() -> UnsafeMutableRawPointer {
    PluginDescriptor(name: "PeripheralOnlyPlugin", namespace: "periph", roles: [.peripheral]) { _ in
        PeripheralOnly()
    }.exported()
}
