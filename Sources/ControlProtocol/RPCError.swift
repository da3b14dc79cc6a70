import JSON

/// A JSON-RPC error object: what a handler throws and what a client receives.
public struct RPCError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The code.
    public var code: RPCErrorCode
    /// One sentence for a person.
    public var message: String
    /// Structured detail (for example the field errors of a rejected config).
    public var data: JSON?

    /// An error with a code, a message and optional data.
    public init(_ code: RPCErrorCode, _ message: String, data: JSON? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    /// Invalid params (-32602) with a message naming the parameter.
    public static func invalidParams(_ message: String) -> RPCError { RPCError(.invalidParams, message) }

    /// -32602 for params a schema refused: the message is the first problem
    /// (`durationSeconds: expected an integer from 1 to 86400, found the
    /// string "zz"`), `data.errors` lists every one as `{"path", "message"}`.
    public init(invalidParams errors: JSONFieldErrors) {
        let first = errors.errors.first?.description ?? "invalid params"
        let more = errors.errors.count > 1 ? " (and \(errors.errors.count - 1) more in data.errors)" : ""
        self.init(
            .invalidParams, first + more,
            data: [
                "errors": .array(
                    errors.errors.map { ["path": .string($0.path), "message": .string($0.message)] })
            ])
    }

    /// The error object as JSON: `{"code":…, "message":…, "data":…}`.
    public var json: JSON {
        var object: JSONObject = ["code": .int(code.rawValue), "message": .string(message)]
        if let data { object["data"] = data }
        return .object(object)
    }

    /// Reads an error object; `nil` if `json` is not one.
    public init?(json: JSON) {
        guard let code = json["code"]?.intValue, let message = json["message"]?.stringValue else { return nil }
        self.init(RPCErrorCode(rawValue: code), message, data: json["data"])
    }

    /// `message (code N)`.
    public var description: String { "\(message) (\(code.rawValue))" }
}
