import JSON
import RoleKit
import Synchronization

/// Stands in for the agent around a role plugin, the way swift-log's in-memory handler stands in for a log backend:
/// a ``RoleContext`` whose method registrar, event sink and logger record what the plugin registers, emits and logs,
/// and a way to call its control methods as the control server would.
///
/// ```swift
/// let host = RecordingPluginHost(namespace: "hello")
/// let (manager, backend) = await FakePeripheralBackend.poweredOn()
/// let plugin = try HelloPlugin(context: host.context(role: .peripheral, directory: dir, manager: .peripheral(manager)))
/// try await plugin.start()
/// #expect(try await host.call("hello.greet") == "hello")
/// ```
public final class RecordingPluginHost: PluginMethodRegistrar, PluginEventSink {
    /// An event the plugin emitted.
    public struct Event: Sendable {
        /// Its name.
        public let name: String
        /// Its data.
        public let data: JSON
    }

    /// The plugin's namespace.
    public let namespace: String
    private let handlers = Mutex<[String: (ParamSchema, PluginMethodHandler)]>([:])
    private let emitted = Mutex<[Event]>([])
    private let lines = Mutex<[String]>([])

    /// A host for a plugin in `namespace`.
    public init(namespace: String) { self.namespace = namespace }

    /// Records `handler` for `method`, taking `params`.
    public func register(
        _ method: String, params: ParamSchema, handler: @escaping PluginMethodHandler
    ) throws(PluginRegistrationError) {
        handlers.withLock { $0[method] = (params, handler) }
    }

    /// Records the event.
    public func emit(_ name: String, _ data: JSON) { emitted.withLock { $0.append(Event(name: name, data: data)) } }

    /// The handler registered for `method` behind its params check (-32602 naming the field), as the agent runs it.
    public func handler(_ method: String) -> PluginMethodHandler? {
        guard let (params, handler) = handlers.withLock({ $0[method] }) else { return nil }
        return { call in
            var checked = call
            do {
                checked.arguments = try params.validate(call.params)
            } catch {
                throw PluginMethodError.invalidParams("\(error)")
            }
            return try await handler(checked)
        }
    }

    /// The names of the events emitted so far, in order.
    public var events: [String] { emitted.withLock { $0.map(\.name) } }

    /// The events emitted so far, in order.
    public var emittedEvents: [Event] { emitted.withLock { $0 } }

    /// A logger keeping every line as `level: message`.
    public var logger: PluginLogger { PluginLogger { [self] level, message in log("\(level): \(message)") } }

    /// The lines logged through ``logger`` so far.
    public var logLines: [String] { lines.withLock { $0 } }

    private func log(_ line: String) { lines.withLock { $0.append(line) } }

    /// Calls the plugin's `method` as the control server would (as root, from pid 1).
    /// - Throws: ``PluginMethodError`` from the handler, or `-32601` when nothing registered `method`.
    public func call(_ method: String, _ params: JSON? = nil) async throws -> JSON {
        guard let handler = handler(method) else {
            throw PluginMethodError(code: -32601, "method not found: \(method)")
        }
        return try await handler(PluginCall(method: method, params: params, callerUid: 0, callerPid: 1))
    }

    /// A context for a plugin in `role` with `config`, its state in `directory`, and `manager`.
    public func context(
        role: PluginRole, config: JSON = [:], directory: String, manager: RoleManager = .none
    ) -> RoleContext {
        RoleContext(
            role: role, config: config, logger: logger, state: PluginStateStore(directory: directory), methods: self,
            events: self, manager: manager)
    }
}
