import JSON

/// Builders for the JSON-RPC 2.0 messages of the control API, each one line
/// of compact JSON without the newline.
public enum RPCMessage {
    /// A request: `{"jsonrpc":"2.0","id":…,"method":…,"params":…}`.
    public static func request(id: RPCID, method: String, params: JSON? = nil) -> JSON {
        var object: JSONObject = ["jsonrpc": "2.0", "id": id.json, "method": .string(method)]
        if let params { object["params"] = params }
        return .object(object)
    }

    /// A notification (a request without id, which gets no reply), also the
    /// shape of the events the agent sends.
    public static func notification(method: String, params: JSON? = nil) -> JSON {
        var object: JSONObject = ["jsonrpc": "2.0", "method": .string(method)]
        if let params { object["params"] = params }
        return .object(object)
    }

    /// A successful response.
    public static func result(id: RPCID, _ result: JSON) -> JSON {
        ["jsonrpc": "2.0", "id": id.json, "result": result]
    }

    /// An error response.
    public static func error(id: RPCID, _ error: RPCError) -> JSON {
        ["jsonrpc": "2.0", "id": id.json, "error": error.json]
    }
}

/// A message as a client reads it from the agent.
public enum RPCIncoming: Sendable, Hashable {
    /// The reply to a request.
    case response(id: RPCID, result: Result<JSON, RPCError>)
    /// A notification: an event (`method == "event"`) or another message.
    case notification(method: String, params: JSON?)

    /// Classifies a parsed line; `nil` if it is neither a response nor a notification.
    public init?(_ json: JSON) {
        guard json["jsonrpc"] == "2.0" else { return nil }
        if let method = json["method"]?.stringValue, json["id"] == nil {
            self = .notification(method: method, params: json["params"])
            return
        }
        guard let rawID = json["id"], let id = RPCID(json: rawID) else { return nil }
        if let result = json["result"] {
            self = .response(id: id, result: .success(result))
        } else if let rawError = json["error"], let error = RPCError(json: rawError) {
            self = .response(id: id, result: .failure(error))
        } else {
            return nil
        }
    }
}
