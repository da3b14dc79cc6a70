import ControlProtocol
import JSON
import RoleKit
import Synchronization

/// The agent's side of one plugin instance's context: its control methods go
/// into the method registry under its namespace, its events onto the event
/// bus. Once ``deactivate()`` is called (the plugin is stopping), no method
/// can be added and events are dropped.
final class PluginBridge: PluginMethodRegistrar, PluginEventSink {
    let namespace: String
    private let registry: MethodRegistry
    private let bus: EventBus
    private let active = Mutex(true)

    init(namespace: String, registry: MethodRegistry, bus: EventBus) {
        self.namespace = namespace
        self.registry = registry
        self.bus = bus
    }

    func register(
        _ method: String, params: ParamSchema, handler: @escaping PluginMethodHandler
    ) throws(PluginRegistrationError) {
        let outcome: Result<Void, PluginRegistrationError> = active.withLock { active in
            guard active else { return .failure(PluginRegistrationError("\"\(method)\": the plugin has stopped")) }
            do {
                try registry.register(method, namespace: namespace, params: params) { call in
                    try await Self.invoke(handler, call)
                }
                return .success(())
            } catch {
                return .failure(PluginRegistrationError("\(error)"))
            }
        }
        try outcome.get()
    }

    func emit(_ name: String, _ data: JSON) {
        // Under the lock, so no event slips out after deactivate() returned
        // (publishing only hands the event to the observers' queues).
        active.withLock { active in
            guard active else { return }
            bus.publish(.plugin, ["namespace": .string(namespace), "name": .string(name), "data": data])
        }
    }

    /// Refuses further registrations and events, then removes the plugin's methods.
    func deactivate() {
        active.withLock { active in
            active = false
            registry.unregisterNamespace(namespace)
        }
    }

    /// Calls a plugin handler and turns its errors into JSON-RPC errors.
    static func invoke(_ handler: PluginMethodHandler, _ call: MethodCall) async throws(RPCError) -> JSON {
        let pluginCall = PluginCall(
            method: call.method, params: call.params, arguments: call.arguments, callerUid: call.peer.uid,
            callerPid: call.peer.pid)
        do {
            return try await handler(pluginCall)
        } catch let error as PluginMethodError {
            throw RPCError(pluginError: error)
        } catch {
            throw RPCError(.internalError, "\(call.method) failed: \(error)")
        }
    }
}

extension RPCError {
    /// A plugin method's error as the client receives it: the plugin's own
    /// code, unless it used one of the codes JSON-RPC and the agent own
    /// (-32768...-32000, other than -32602 invalid params), which becomes
    /// -32603 internal error so a plugin cannot forge an agent error.
    public init(pluginError error: PluginMethodError) {
        if error.code == RPCErrorCode.invalidParams.rawValue || !(-32768 ... -32000).contains(error.code) {
            self.init(RPCErrorCode(rawValue: error.code), error.message, data: error.data)
        } else {
            self.init(
                .internalError, "\(error.message) (the plugin used the reserved code \(error.code))", data: error.data)
        }
    }
}
