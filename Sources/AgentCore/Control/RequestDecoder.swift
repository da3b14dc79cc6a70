import ControlProtocol
import JSON

/// A request the agent must act on.
public struct RPCCall: Sendable, Hashable {
    /// The id to reply with; `nil` for a notification, which gets no reply.
    public var id: RPCID?
    /// The method name.
    public var method: String
    /// The params: an object, an array or absent.
    public var params: JSON?

    /// A call.
    public init(id: RPCID?, method: String, params: JSON?) {
        self.id = id
        self.method = method
        self.params = params
    }
}

/// What one line from a client means.
public enum DecodedLine: Sendable, Hashable {
    /// A well-formed request or notification.
    case call(RPCCall)
    /// Not a usable request: send this error reply (id null unless the id was readable).
    case reject(id: RPCID, RPCError)
}

/// Reads one JSON-RPC 2.0 line into a call or the error reply it deserves.
/// Pure: no I/O, no state.
public enum RequestDecoder {
    /// Decodes `line` (one line, without its newline).
    public static func decode(_ line: some Collection<UInt8>, maxDepth: Int = 64) -> DecodedLine {
        let json: JSON
        do {
            json = try JSON(parsing: line, options: JSONParseOptions(maxDepth: maxDepth, maxInputBytes: line.count + 1))
        } catch {
            return .reject(id: .null, RPCError(.parseError, "parse error: \(error)"))
        }
        return decode(json)
    }

    /// Decodes a parsed message.
    public static func decode(_ json: JSON) -> DecodedLine {
        if case .array = json {
            return .reject(id: .null, RPCError(.invalidRequest, "batches are not supported: send one request per line"))
        }
        guard case .object(let object) = json else {
            return .reject(id: .null, RPCError(.invalidRequest, "a request must be a JSON object"))
        }
        var id: RPCID?
        if let rawID = object["id"] {
            guard let parsed = RPCID(json: rawID) else {
                return .reject(
                    id: .null, RPCError(.invalidRequest, "\"id\" must be a string, an integer or null"))
            }
            id = parsed
        }
        let replyID = id ?? .null
        guard object["jsonrpc"] == "2.0" else {
            return .reject(id: replyID, RPCError(.invalidRequest, "\"jsonrpc\" must be \"2.0\""))
        }
        guard let method = object["method"]?.stringValue, !method.isEmpty else {
            return .reject(id: replyID, RPCError(.invalidRequest, "\"method\" must be a non-empty string"))
        }
        let params = object["params"]
        switch params {
        case nil, .object?, .array?: break
        default:
            return .reject(id: replyID, RPCError(.invalidRequest, "\"params\" must be an object or an array"))
        }
        return .call(RPCCall(id: id, method: method, params: params))
    }
}
