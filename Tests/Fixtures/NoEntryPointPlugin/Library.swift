// Test fixture: a shared library that uses the core but exports no plugin
// entry point.
import RoleKit

/// Something to link.
public func noEntryPointRole() -> PluginRole { .central }
