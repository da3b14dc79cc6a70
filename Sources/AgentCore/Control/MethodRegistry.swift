import ControlProtocol
import JSON
import RoleKit
import Synchronization

/// Who is calling: the peer's credentials from SO_PEERCRED.
public struct PeerIdentity: Sendable, Hashable {
    /// The client's connection number, unique for the agent's lifetime.
    public var client: UInt64
    /// The peer's process id.
    public var pid: Int32
    /// The peer's user id.
    public var uid: UInt32

    /// An identity.
    public init(client: UInt64, pid: Int32, uid: UInt32) {
        self.client = client
        self.pid = pid
        self.uid = uid
    }
}

/// One call as a handler sees it.
public struct MethodCall: Sendable {
    /// The method name.
    public var method: String
    /// The params (object, array or absent).
    public var params: JSON?
    /// The params as the method's ``ParamSchema`` accepted them (set by the
    /// registry before the handler runs).
    public var arguments: ParamValues
    /// The caller.
    public var peer: PeerIdentity
    /// Work to run on the server's loop once the reply is queued and written
    /// as far as the socket takes it (for example: stop the agent).
    public let afterReply: AfterReply

    /// A call.
    public init(method: String, params: JSON?, peer: PeerIdentity, afterReply: AfterReply = AfterReply()) {
        self.method = method
        self.params = params
        self.arguments = ParamValues(params)
        self.peer = peer
        self.afterReply = afterReply
    }
}

/// Closures a handler leaves for after its reply has gone out.
public final class AfterReply: Sendable {
    private let actions = Mutex<[@Sendable () -> Void]>([])

    /// No actions yet.
    public init() {}

    /// Adds an action.
    public func add(_ action: @escaping @Sendable () -> Void) {
        actions.withLock { $0.append(action) }
    }

    /// Runs and removes every action, in order.
    public func run() {
        for action in actions.withLock({ current in
            defer { current = [] }
            return current
        }) { action() }
    }
}

/// A method's implementation. Throw ``RPCError`` to choose the error code;
/// any other error becomes -32603 internal error with its description.
public typealias MethodHandler = @Sendable (MethodCall) async throws -> JSON

/// A method that answers at once from state it reads under short locks:
/// the control server runs it on its loop thread, with no task and no
/// hand-over between threads. It must not block, wait or do work that grows
/// with the number of things the agent knows (a listing of every device is
/// a ``MethodHandler``).
public typealias ImmediateMethodHandler = @Sendable (MethodCall) throws -> JSON

/// Why a method could not be registered.
public enum RegistrationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The name is not `namespace.name` with a non-empty namespace and name.
    case malformedName(String)
    /// A plugin tried to register outside its own namespace.
    case outsideNamespace(method: String, namespace: String)
    /// A plugin claimed a namespace the agent reserves.
    case reservedNamespace(String)
    /// The method is already registered.
    case duplicate(String)

    /// One sentence.
    public var description: String {
        switch self {
        case .malformedName(let name): "\"\(name)\" is not a method name of the form namespace.name"
        case .outsideNamespace(let method, let namespace):
            "\"\(method)\" is outside the plugin's namespace \"\(namespace)\""
        case .reservedNamespace(let namespace): "the namespace \"\(namespace)\" is reserved for the agent"
        case .duplicate(let name): "\"\(name)\" is already registered"
        }
    }
}

/// The methods the control server dispatches to, by name, each with the
/// params it declared. Built-in methods register with
/// ``registerBuiltin(_:params:handler:)``; a plugin registers with
/// ``register(_:namespace:params:handler:)`` and may add methods only under
/// its own namespace, which may not be one of ``ControlAPI/reservedNamespaces``.
///
/// Every call is checked against its method's ``ParamSchema`` before the
/// handler runs (``handler(for:)``): one mechanism for every method, and a
/// refused call never reaches the code that would change something.
public final class MethodRegistry: Sendable {
    private struct Entry {
        let params: ParamSchema
        let handler: MethodHandler
        /// The same handler, callable without a task (set for immediate methods only).
        var immediate: ImmediateMethodHandler?
    }

    private let entries = Mutex<[String: Entry]>([:])

    /// An empty registry.
    public init() {}

    /// Registers a built-in method (any namespace, including reserved ones) taking `params`.
    public func registerBuiltin(
        _ method: String, params: ParamSchema, handler: @escaping MethodHandler
    ) throws(RegistrationError) {
        try insert(builtin: method, Entry(params: params, handler: handler))
    }

    /// Registers a built-in method that answers at once (see ``ImmediateMethodHandler``):
    /// the control server calls it on its loop thread; every other caller, like any method.
    public func registerImmediate(
        _ method: String, params: ParamSchema, handler: @escaping ImmediateMethodHandler
    ) throws(RegistrationError) {
        try insert(builtin: method, Entry(params: params, handler: { try handler($0) }, immediate: handler))
    }

    /// Inserts a built-in method: any namespace, reserved ones included, but a well-formed name.
    private func insert(builtin method: String, _ entry: Entry) throws(RegistrationError) {
        guard ControlAPI.namespace(of: method) != nil, !method.hasSuffix(".") else {
            throw .malformedName(method)
        }
        try insert(method, entry)
    }

    /// Registers a plugin's method taking `params`: `method` must be
    /// `namespace.something` and `namespace` must not be reserved.
    public func register(
        _ method: String, namespace: String, params: ParamSchema, handler: @escaping MethodHandler
    )
        throws(RegistrationError)
    {
        guard !ControlAPI.reservedNamespaces.contains(namespace) else { throw .reservedNamespace(namespace) }
        guard let owner = ControlAPI.namespace(of: method), !method.hasSuffix(".") else {
            throw .malformedName(method)
        }
        guard owner == namespace else { throw .outsideNamespace(method: method, namespace: namespace) }
        try insert(method, Entry(params: params, handler: handler))
    }

    private func insert(_ method: String, _ entry: Entry) throws(RegistrationError) {
        let added = entries.withLock { table in
            guard table[method] == nil else { return false }
            table[method] = entry
            return true
        }
        guard added else { throw .duplicate(method) }
    }

    /// Removes every method of `namespace` (when its plugin stops).
    public func unregisterNamespace(_ namespace: String) {
        entries.withLock { table in
            table = table.filter { ControlAPI.namespace(of: $0.key) != Substring(namespace) }
        }
    }

    /// The handler for `method`, if registered: it checks the call's params
    /// against the method's schema, throws -32602 naming every problem if
    /// they do not match, and only then runs the method's own handler with
    /// ``MethodCall/arguments`` set.
    public func handler(for method: String) -> MethodHandler? {
        guard let entry = entries.withLock({ $0[method] }) else { return nil }
        return { call in
            var checked = call
            checked.arguments = try Self.check(call.params, against: entry.params)
            return try await entry.handler(checked)
        }
    }

    /// Runs `call` at once if its method is immediate (``registerImmediate(_:params:handler:)``), answering
    /// as ``call(_:)`` would; nil for any other method, which the caller runs as a task.
    public func callImmediately(_ call: MethodCall) -> Result<JSON, RPCError>? {
        guard let entry = entries.withLock({ $0[call.method] }), let immediate = entry.immediate else { return nil }
        do {
            var checked = call
            checked.arguments = try Self.check(call.params, against: entry.params)
            return .success(try immediate(checked))
        } catch {
            return .failure(Self.rpcError(error))
        }
    }

    /// The params `method` declared, if it is registered.
    public func params(of method: String) -> ParamSchema? {
        entries.withLock { $0[method]?.params }
    }

    /// Every registered method name, sorted.
    public var methods: [String] { entries.withLock { $0.keys.sorted() } }

    /// Runs `call` through its handler (its params checked first): the
    /// result, or the JSON-RPC error a client receives (-32601 for an unknown
    /// method, -32602 for params the method's schema refuses; a handler's
    /// non-RPC error becomes -32603). The control socket and the fleet's RPC
    /// both dispatch here, so a call is answered the same way whichever way
    /// it came.
    public func call(_ call: MethodCall) async -> Result<JSON, RPCError> {
        guard let handler = handler(for: call.method) else {
            return .failure(RPCError(.methodNotFound, "method not found: \(call.method)"))
        }
        do {
            return .success(try await handler(call))
        } catch {
            return .failure(Self.rpcError(error))
        }
    }

    /// The error a client receives for a handler's `error`: an ``RPCError`` as thrown, any other -32603.
    private static func rpcError(_ error: any Error) -> RPCError {
        (error as? RPCError) ?? RPCError(.internalError, "\(error)")
    }

    /// `params` as `schema` accepts them, or -32602 (``RPCError/init(invalidParams:)``).
    static func check(_ params: JSON?, against schema: ParamSchema) throws(RPCError) -> ParamValues {
        do {
            return try schema.validate(params)
        } catch {
            throw RPCError(invalidParams: error)
        }
    }
}
