import AgentCore
import ControlProtocol
import JSON
import Synchronization

/// JSON-RPC over MQTT: requests arrive on `<prefix>/rpc`; the reply goes to
/// the MQTT 5 response topic (with the request's correlation data) or, from
/// an MQTT 3.1.1 client, to the request's `replyTo` member. Replies may only
/// go under `<prefix>/rpc/reply/` (the topics a node's ACL lets it write).
/// Methods are answered by the same ``MethodRegistry`` as the control socket,
/// limited to `fleet.rpcAllow`; at most ``maxInFlight`` run at once.
final class FleetRPC: Sendable {
    /// A request decoded from one MQTT message.
    struct Request: Sendable {
        var decoded: DecodedLine
        var replyTopic: String?
        var correlation: [UInt8]?
    }

    static let maxInFlight = 16
    static let maxRequestBytes = 1 << 20

    private let registry: MethodRegistry
    private let topics: FleetTopics
    private let isAllowed: @Sendable (String) -> Bool
    private let inFlight = Atomic<Int>(0)
    private let counters = Mutex<(answered: Int64, refused: Int64, unanswerable: Int64)>((0, 0, 0))

    init(registry: MethodRegistry, topics: FleetTopics, isAllowed: @escaping @Sendable (String) -> Bool) {
        self.registry = registry
        self.topics = topics
        self.isAllowed = isAllowed
    }

    /// Decodes `message`: the request (or the error it deserves) and where the reply goes.
    func decode(_ message: MQTTMessage) -> Request {
        guard message.payload.count <= Self.maxRequestBytes else {
            let error = RPCError(.messageTooLarge, "request longer than \(Self.maxRequestBytes) bytes")
            return Request(decoded: .reject(id: .null, error), replyTopic: message.responseTopic)
        }
        var replyTopic = message.responseTopic
        var decoded = RequestDecoder.decode(message.payload)
        if case .call = decoded, let json = try? JSON(parsing: message.payload), case .object(var object) = json,
            let replyTo = object.removeValue(forKey: "replyTo")
        {
            replyTopic = replyTopic ?? replyTo.stringValue
            decoded = RequestDecoder.decode(.object(object))
        }
        return Request(decoded: decoded, replyTopic: replyTopic, correlation: message.correlationData)
    }

    /// Whether replies may go to `topic`.
    func acceptsReplyTopic(_ topic: String) -> Bool {
        topic.hasPrefix(topics.rpcReplyPrefix) && topic.count > topics.rpcReplyPrefix.count && !topic.contains("+")
            && !topic.contains("#")
    }

    /// Runs the request and calls `reply` with the JSON-RPC response (nil for
    /// a notification, or when the reply topic is missing or not allowed:
    /// such calls are refused without running).
    func handle(_ request: Request, reply: @escaping @Sendable (_ topic: String, _ response: JSON) -> Void) {
        guard let topic = request.replyTopic, acceptsReplyTopic(topic) else {
            counters.withLock { $0.unanswerable += 1 }
            return
        }
        switch request.decoded {
        case .reject(let id, let error):
            counters.withLock { $0.refused += 1 }
            reply(topic, RPCMessage.error(id: id, error))
        case .call(let call):
            let id = call.id ?? .null
            guard isAllowed(call.method) else {
                counters.withLock { $0.refused += 1 }
                let error = RPCError(.notAuthorized, "\(call.method) may not be called over MQTT (fleet.rpcAllow)")
                if call.id != nil { reply(topic, RPCMessage.error(id: id, error)) }
                return
            }
            guard inFlight.add(1, ordering: .relaxed).newValue <= Self.maxInFlight else {
                inFlight.subtract(1, ordering: .relaxed)
                counters.withLock { $0.refused += 1 }
                let error = RPCError(
                    .clientTooSlow, "\(Self.maxInFlight) requests are already running; try again later")
                if call.id != nil { reply(topic, RPCMessage.error(id: id, error)) }
                return
            }
            let peer = PeerIdentity(client: 0, pid: 0, uid: UInt32.max)
            let methodCall = MethodCall(method: call.method, params: call.params, peer: peer)
            Task { [self] in
                let outcome = await registry.call(methodCall)
                inFlight.subtract(1, ordering: .relaxed)
                counters.withLock { $0.answered += 1 }
                guard call.id != nil else { return }
                switch outcome {
                case .success(let result): reply(topic, RPCMessage.result(id: id, result))
                case .failure(let error): reply(topic, RPCMessage.error(id: id, error))
                }
                methodCall.afterReply.run()
            }
        }
    }

    var statusJSON: JSON {
        let (answered, refused, unanswerable) = counters.withLock { $0 }
        return [
            "answered": .int(answered), "refused": .int(refused), "unanswerable": .int(unanswerable),
            "running": .int(Int64(inFlight.load(ordering: .relaxed))),
        ]
    }
}
