import JSON
import RoleKit
import Synchronization

/// A plugin for either role that proves the plugin path works end to end:
/// `diag.ping` answers with the role and how many times the plugin has
/// started on this node (kept in its state directory), `diag.echo` returns
/// its params, and a `heartbeat` event is published every `heartbeatSeconds`.
final class DiagnosticsPlugin: RolePlugin {
    private let context: RoleContext
    private let config: DiagnosticsConfig
    private let heartbeat = Mutex<Task<Void, Never>?>(nil)
    private let starts = Mutex<Int64>(0)

    init(context: RoleContext) throws(JSONFieldErrors) {
        self.context = context
        self.config = try DiagnosticsConfig(json: context.config)
    }

    func start() async throws {
        let count = try await recordStart()
        starts.withLock { $0 = count }
        let role = context.role
        try context.methods.register("diag.ping", params: .none) { [weak self] _ in
            [
                "pong": true, "plugin": "Diagnostics", "role": .string(role.rawValue),
                "starts": .int(self?.startCount ?? 0),
            ]
        }
        try context.methods.register("diag.echo", params: .any) { call in call.params ?? .null }
        let context = self.context
        try context.methods.register("diag.ble", params: .none) { _ in Self.bleReport(context) }
        if config.heartbeatSeconds > 0 {
            let events = context.events
            let seconds = config.heartbeatSeconds
            heartbeat.withLock {
                $0 = Task {
                    var beat: Int64 = 0
                    while (try? await Task.sleep(for: .seconds(seconds))) != nil {
                        beat += 1
                        events.emit("heartbeat", ["beat": .int(beat), "role": .string(role.rawValue)])
                    }
                }
            }
        }
        context.logger.info("started in the \(role) role (start \(count) on this node)")
    }

    func stop() async {
        let task = heartbeat.withLock { task in
            defer { task = nil }
            return task
        }
        task?.cancel()
        await task?.value
        context.logger.info("stopped")
    }

    private var startCount: Int64 { starts.withLock { $0 } }

    /// Which BLE manager the context gave this role and its state; asking for
    /// the other role's manager is refused (the typed accessors).
    static func bleReport(_ context: RoleContext) -> JSON {
        switch context.role {
        case .central:
            guard let central = try? context.central() else { return ["manager": "none"] }
            let refused = (try? context.peripheral()) == nil
            return [
                "manager": "central", "state": .string(central.currentState.rawValue),
                "otherRoleRefused": .bool(refused),
            ]
        case .peripheral:
            guard let peripheral = try? context.peripheral() else { return ["manager": "none"] }
            let refused = (try? context.central()) == nil
            return [
                "manager": "peripheral", "state": .string(peripheral.currentState.rawValue),
                "otherRoleRefused": .bool(refused),
            ]
        }
    }

    /// Increments the start counter kept in the state directory.
    private func recordStart() async throws(PluginStateError) -> Int64 {
        let previous =
            try await context.state.read("starts").flatMap { Int64(String(decoding: $0, as: UTF8.self)) } ?? 0
        try await context.state.write("starts", Array("\(previous + 1)".utf8))
        return previous + 1
    }
}
