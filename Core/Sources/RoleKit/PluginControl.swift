import JSON

/// One control API call to a plugin method, as the plugin sees it.
public struct PluginCall: Sendable {
    /// The full method name (`diag.echo`).
    public var method: String
    /// The params: an object, an array, or `nil` when absent.
    public var params: JSON?
    /// The params as the method's ``ParamSchema`` accepted them, for typed reads.
    public var arguments: ParamValues
    /// The caller's user id (from SO_PEERCRED).
    public var callerUid: UInt32
    /// The caller's process id.
    public var callerPid: Int32

    /// A call whose params `arguments` accepted (``ParamValues/init(_:)`` of `params` by default).
    public init(method: String, params: JSON?, arguments: ParamValues? = nil, callerUid: UInt32, callerPid: Int32) {
        self.method = method
        self.params = params
        self.arguments = arguments ?? ParamValues(params)
        self.callerUid = callerUid
        self.callerPid = callerPid
    }
}

/// A plugin method's implementation: the result, or a thrown
/// ``PluginMethodError`` (any other error becomes a JSON-RPC internal error
/// carrying its description).
public typealias PluginMethodHandler = @Sendable (PluginCall) async throws -> JSON

/// An error a plugin method returns to the caller as a JSON-RPC error.
public struct PluginMethodError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The code. Plugin codes lie outside -32768...-32000 (the range JSON-RPC
    /// and the agent own), except ``invalidParams(_:)``'s -32602.
    public var code: Int64
    /// One sentence for a person.
    public var message: String
    /// Structured detail, if any.
    public var data: JSON?

    /// An error with a plugin-defined code.
    public init(code: Int64, _ message: String, data: JSON? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    /// JSON-RPC's -32602 invalid params, with a message naming the parameter.
    public static func invalidParams(_ message: String) -> PluginMethodError {
        PluginMethodError(code: -32602, message)
    }

    /// -32602 for every problem a ``ParamSchema`` found: the first one as
    /// the message, all of them in `data.errors` (`{"path", "message"}`), as
    /// the agent answers.
    public static func invalidParams(_ errors: JSONFieldErrors) -> PluginMethodError {
        PluginMethodError(
            code: -32602, errors.errors.first?.description ?? "invalid params",
            data: ["errors": .array(errors.errors.map { ["path": .string($0.path), "message": .string($0.message)] })])
    }

    /// `message (code N)`.
    public var description: String { "\(message) (\(code))" }
}

/// Why a plugin could not register a method.
public struct PluginRegistrationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// One sentence naming the method and the problem.
    public var description: String

    /// An error with its sentence.
    public init(_ description: String) { self.description = description }
}

/// Where a plugin adds control methods. Every method must be in the plugin's
/// namespace (`<namespace>.<name>`) and declare its params; the agent
/// removes them all when the plugin stops.
public protocol PluginMethodRegistrar: Sendable {
    /// The plugin's namespace, from its descriptor.
    var namespace: String { get }

    /// Adds `method` (such as `diag.ping`) taking `params`. The agent checks
    /// every call against `params` before `handler` runs and answers a call
    /// that does not match with -32602 naming the field (docs/plugins.md).
    /// Throws if the name is outside the namespace, malformed, already
    /// registered, or the plugin has stopped.
    func register(
        _ method: String, params: ParamSchema, handler: @escaping PluginMethodHandler
    ) throws(PluginRegistrationError)
}

/// Where a plugin publishes events. Subscribers of the control API receive
/// them as `plugin` events `{"namespace", "name", "data"}`. Never blocks;
/// events emitted after the plugin stopped are dropped.
public protocol PluginEventSink: Sendable {
    /// Publishes the event `name` with `data`.
    func emit(_ name: String, _ data: JSON)
}
