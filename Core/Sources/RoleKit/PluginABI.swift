/// The binary contract between the agent and a role plugin (docs/plugins.md).
///
/// A plugin is a shared library that exports two C functions:
///
/// - ``abiVersionSymbol`` (`bleagent_plugin_abi_version`): `uint32_t (void)`,
///   returning the ``version`` the plugin was compiled against. It touches no
///   Swift object, so the agent can call it safely whatever the plugin was
///   built with, and reads it before anything else.
/// - ``descriptorSymbol`` (`bleagent_plugin_descriptor`): `void *(void)`,
///   returning a +1 retained ``PluginDescriptor`` (from
///   ``PluginDescriptor/exported()``). The agent calls it only once the ABI
///   version matched.
///
/// ```swift
/// @c(bleagent_plugin_abi_version)
/// public func pluginABIVersion() -> UInt32 { PluginABI.version }
///
/// @c(bleagent_plugin_descriptor)
/// public func pluginDescriptor() -> UnsafeMutableRawPointer {
///     PluginDescriptor(name: "Hello", namespace: "hello", roles: [.central]) { context in
///         HelloPlugin(context: context)
///     }.exported()
/// }
/// ```
public enum PluginABI {
    /// The ABI version of this build of the core. It changes whenever a type
    /// a plugin sees (``RolePlugin``, ``RoleContext``, ``PluginDescriptor`` and
    /// what they reference, including the JSON and GATT modules) changes in a
    /// way a plugin compiled earlier could not survive.
    ///
    /// Version 2: ``RoleContext`` carries the role's BLE manager
    /// (``RoleContext/central`` / ``RoleContext/peripheral``).
    ///
    /// Version 3: ``RoleContext`` carries the fleet publisher
    /// (``RoleContext/fleet``: durable records, sensor readings).
    ///
    /// Version 4: every control method declares its params
    /// (``PluginMethodRegistrar/register(_:params:handler:)``, ``ParamSchema``;
    /// ``PluginCall/arguments``), and a descriptor may carry a
    /// ``PluginDescriptor/validateConfig`` check.
    ///
    /// Version 5: the fleet publisher relays other devices' readings
    /// (``FleetPublisher/publishDeviceReadings(_:_:)``,
    /// ``FleetPublisher/deviceUnavailable(_:)``, ``FleetDevice``,
    /// ``FleetDeviceReading``): a plugin calling them must not load into an
    /// agent without them.
    ///
    /// Version 6: ``PluginStateStore``'s reads and writes are `async` (they run
    /// on the blocking pool) and ``PluginStateError/system(_:)`` carries the
    /// core's one errno error, `SystemError`.
    ///
    /// Emitted into the client: a plugin's `bleagent_plugin_abi_version`
    /// returns the value of the core it was *compiled* against, not of the
    /// core it runs with, which is what makes the check meaningful.
    @_alwaysEmitIntoClient
    public static var version: UInt32 { 6 }

    /// The name of the C function returning the plugin's ABI version.
    public static let abiVersionSymbol = "bleagent_plugin_abi_version"

    /// The name of the C function returning the plugin's retained descriptor.
    public static let descriptorSymbol = "bleagent_plugin_descriptor"

    /// The file name of the plugin called `name`: `lib<name>.so`.
    public static func fileName(ofPlugin name: String) -> String { "lib\(name).so" }
}
