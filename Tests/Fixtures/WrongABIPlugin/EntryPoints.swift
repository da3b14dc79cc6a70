// Test fixture: a plugin that claims another ABI version (as if built against
// an older or newer core). Its descriptor entry point returns a pointer that
// crashes whoever reads it: the loader must reject the plugin on the version
// alone, before touching the descriptor.
import RoleKit

/// One more than the agent's version.
@c(bleagent_plugin_abi_version)
public func wrongABIVersion() -> UInt32 { PluginABI.version &+ 1 }

/// Not a descriptor: reading it would fault.
@c(bleagent_plugin_descriptor)
public func wrongABIDescriptor() -> UnsafeMutableRawPointer? { UnsafeMutableRawPointer(bitPattern: 0x10) }
