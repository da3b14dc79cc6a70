import AgentCore

/// The node's topics under its prefix (docs/fleet.md, "Topics").
struct FleetTopics: Sendable, Hashable {
    let prefix: String

    /// `<prefix>/status`: retained `{"state":"online",...}`; the Last Will is `{"state":"offline"}`.
    var status: String { "\(prefix)/status" }
    /// `<prefix>/events/<kind>`.
    func events(_ kind: String) -> String { "\(prefix)/events/\(kind)" }
    /// `<prefix>/<stream>` for durable records (`payments`).
    func durable(_ stream: String) -> String { "\(prefix)/\(stream)" }
    /// `<prefix>/sensors/<id>`.
    func sensor(_ id: String) -> String { "\(prefix)/sensors/\(id)" }
    /// `<prefix>/sensors/<device>/<reading>`: a relayed device's reading.
    func deviceReading(_ device: String, _ reading: String) -> String { "\(prefix)/sensors/\(device)/\(reading)" }
    /// `<prefix>/sensors/<device>/availability`: `online` or `offline` (retained).
    func deviceAvailability(_ device: String) -> String { "\(prefix)/sensors/\(device)/availability" }
    /// `<prefix>/rpc`: JSON-RPC requests in.
    var rpc: String { "\(prefix)/rpc" }
    /// Replies go to topics under `<prefix>/rpc/reply/`.
    var rpcReplyPrefix: String { "\(prefix)/rpc/reply/" }
    /// `<prefix>/config/set`: a roles.json pushed by the fleet (retained).
    var configSet: String { "\(prefix)/config/set" }
    /// `<prefix>/config/result`: the outcome of the last push (retained).
    var configResult: String { "\(prefix)/config/result" }
}
