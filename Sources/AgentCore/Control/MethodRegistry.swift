import ControlProtocol
import JSON
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
    /// The caller.
    public var peer: PeerIdentity
    /// Work to run on the server's loop once the reply is queued and written
    /// as far as the socket takes it (for example: stop the agent).
    public let afterReply: AfterReply

    /// A call.
    public init(method: String, params: JSON?, peer: PeerIdentity, afterReply: AfterReply = AfterReply()) {
        self.method = method
        self.params = params
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

/// The methods the control server dispatches to, by name. Built-in methods
/// register with ``registerBuiltin(_:handler:)``; a plugin registers with
/// ``register(_:namespace:handler:)`` and may add methods only under its own
/// namespace, which may not be one of ``ControlAPI/reservedNamespaces``.
public final class MethodRegistry: Sendable {
    private let handlers = Mutex<[String: MethodHandler]>([:])

    /// An empty registry.
    public init() {}

    /// Registers a built-in method (any namespace, including reserved ones).
    public func registerBuiltin(_ method: String, handler: @escaping MethodHandler) throws(RegistrationError) {
        guard ControlAPI.namespace(of: method) != nil, !method.hasSuffix(".") else {
            throw .malformedName(method)
        }
        try insert(method, handler)
    }

    /// Registers a plugin's method: `method` must be `namespace.something`
    /// and `namespace` must not be reserved.
    public func register(
        _ method: String, namespace: String, handler: @escaping MethodHandler
    )
        throws(RegistrationError)
    {
        guard !ControlAPI.reservedNamespaces.contains(namespace) else { throw .reservedNamespace(namespace) }
        guard let owner = ControlAPI.namespace(of: method), !method.hasSuffix(".") else {
            throw .malformedName(method)
        }
        guard owner == namespace else { throw .outsideNamespace(method: method, namespace: namespace) }
        try insert(method, handler)
    }

    private func insert(_ method: String, _ handler: @escaping MethodHandler) throws(RegistrationError) {
        let added = handlers.withLock { table in
            guard table[method] == nil else { return false }
            table[method] = handler
            return true
        }
        guard added else { throw .duplicate(method) }
    }

    /// Removes every method of `namespace` (when its plugin stops).
    public func unregisterNamespace(_ namespace: String) {
        handlers.withLock { table in
            table = table.filter { ControlAPI.namespace(of: $0.key) != Substring(namespace) }
        }
    }

    /// The handler for `method`, if registered.
    public func handler(for method: String) -> MethodHandler? {
        handlers.withLock { $0[method] }
    }

    /// Every registered method name, sorted.
    public var methods: [String] { handlers.withLock { $0.keys.sorted() } }

    /// Runs `call` through its handler: the result, or the JSON-RPC error a
    /// client receives (-32601 for an unknown method; a handler's non-RPC
    /// error becomes -32603). The control socket and the fleet's RPC both
    /// dispatch here, so a call is answered the same way whichever way it came.
    public func call(_ call: MethodCall) async -> Result<JSON, RPCError> {
        guard let handler = handler(for: call.method) else {
            return .failure(RPCError(.methodNotFound, "method not found: \(call.method)"))
        }
        do {
            return .success(try await handler(call))
        } catch let error as RPCError {
            return .failure(error)
        } catch {
            return .failure(RPCError(.internalError, "\(error)"))
        }
    }
}
