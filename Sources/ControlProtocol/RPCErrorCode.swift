/// A JSON-RPC 2.0 error code. Open: a code this build does not know still
/// round-trips. The agent's own codes lie in -32099...-32000, the range
/// JSON-RPC leaves to the server; plugins use codes outside -32768...-32000.
public struct RPCErrorCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The number on the wire.
    public let rawValue: Int64

    /// A code from its number.
    public init(rawValue: Int64) { self.rawValue = rawValue }

    /// -32700: the line is not valid JSON.
    public static let parseError = RPCErrorCode(rawValue: -32700)
    /// -32600: the JSON is not a request object, or a batch (not supported).
    public static let invalidRequest = RPCErrorCode(rawValue: -32600)
    /// -32601: no method of that name is registered.
    public static let methodNotFound = RPCErrorCode(rawValue: -32601)
    /// -32602: the method exists but its parameters are wrong.
    public static let invalidParams = RPCErrorCode(rawValue: -32602)
    /// -32603: a handler failed in a way it did not describe.
    public static let internalError = RPCErrorCode(rawValue: -32603)

    /// -32001: the agent already serves its maximum number of clients; the
    /// connection is closed after this error.
    public static let tooManyClients = RPCErrorCode(rawValue: -32001)
    /// -32002: the peer is not allowed (`control.allowedUids`, `control.group`); the
    /// connection is closed after this error.
    public static let notAuthorized = RPCErrorCode(rawValue: -32002)
    /// -32003: a line was longer than the maximum message size; it was
    /// discarded and the connection lives on.
    public static let messageTooLarge = RPCErrorCode(rawValue: -32003)
    /// -32004: the client sent requests faster than it read the replies; the
    /// connection is closed after this error.
    public static let clientTooSlow = RPCErrorCode(rawValue: -32004)
    /// -32010: `agent.reload` found the config invalid and kept the running
    /// one; `data.errors` lists every problem.
    public static let configInvalid = RPCErrorCode(rawValue: -32010)
    /// -32011: the method needs a running role and none runs.
    public static let roleNotRunning = RPCErrorCode(rawValue: -32011)
    /// -32012: the agent is shutting down and takes no new work.
    public static let shuttingDown = RPCErrorCode(rawValue: -32012)
    /// -32020: a BLE operation failed; `data.code` is the BLE error code and
    /// `data.bluezError` the BlueZ error name when there is one.
    public static let bleFailed = RPCErrorCode(rawValue: -32020)

    /// The name this build knows the code by, or `code N`.
    public var description: String {
        switch self {
        case .parseError: "parse error"
        case .invalidRequest: "invalid request"
        case .methodNotFound: "method not found"
        case .invalidParams: "invalid params"
        case .internalError: "internal error"
        case .tooManyClients: "too many clients"
        case .notAuthorized: "not authorized"
        case .messageTooLarge: "message too large"
        case .clientTooSlow: "client too slow"
        case .configInvalid: "config invalid"
        case .roleNotRunning: "role not running"
        case .shuttingDown: "shutting down"
        case .bleFailed: "BLE operation failed"
        default: "code \(rawValue)"
        }
    }
}
