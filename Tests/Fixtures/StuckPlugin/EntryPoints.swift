// Test fixture: a plugin whose start or stop (config "hang": "start" or
// "stop") never returns, to prove the role host's deadlines.
import JSON
import RoleKit

final class StuckPlugin: RolePlugin {
    private let hang: String?

    init(context: RoleContext) { hang = context.config["hang"]?.stringValue }

    func start() async throws {
        if hang == "start" { await Self.forever() }
    }

    func stop() async {
        if hang == "stop" { await Self.forever() }
    }

    /// Waits on a stream nobody finishes (ends only if the task is cancelled).
    private static func forever() async {
        let (stream, continuation) = AsyncStream<Never>.makeStream()
        for await _ in stream {}
        withExtendedLifetime(continuation) {}
    }
}

/// This build's ABI version.
@c(bleagent_plugin_abi_version)
public func stuckABIVersion() -> UInt32 { PluginABI.version }

/// The descriptor.
@c(bleagent_plugin_descriptor)
public func stuckDescriptor() -> UnsafeMutableRawPointer {
    PluginDescriptor(name: "StuckPlugin", namespace: "stuck", roles: [.central, .peripheral]) { context in
        StuckPlugin(context: context)
    }.exported()
}
