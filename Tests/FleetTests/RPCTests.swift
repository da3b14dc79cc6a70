import AgentCore
import ControlProtocol
import JSON
import Testing

@testable import Fleet

@Suite("RPC over MQTT: decoding and reply topics")
struct RPCTests {
    let rpc = FleetRPC(registry: MethodRegistry(), topics: FleetTopics(prefix: "bleagent/n")) { _ in true }

    @Test("an MQTT 3.1.1 request names its reply topic in replyTo, which is taken out before decoding")
    func replyTo() {
        let message = MQTTMessage(
            topic: "bleagent/n/rpc",
            payload: Array(
                #"{"jsonrpc":"2.0","id":1,"method":"agent.status","replyTo":"bleagent/n/rpc/reply/a"}"#.utf8),
            retained: false)
        let request = rpc.decode(message)
        #expect(request.replyTopic == "bleagent/n/rpc/reply/a")
        guard case .call(let call) = request.decoded else {
            Issue.record("not a call: \(request.decoded)")
            return
        }
        #expect(call.method == "agent.status")
        #expect(call.params == nil)
    }

    @Test("MQTT 5's response topic and correlation data are kept")
    func responseTopic() {
        let message = MQTTMessage(
            topic: "bleagent/n/rpc", payload: Array(#"{"jsonrpc":"2.0","id":1,"method":"a.b"}"#.utf8),
            retained: false, responseTopic: "bleagent/n/rpc/reply/x", correlationData: [1, 2])
        let request = rpc.decode(message)
        #expect(request.replyTopic == "bleagent/n/rpc/reply/x")
        #expect(request.correlation == [1, 2])
    }

    @Test("replies go only under <prefix>/rpc/reply/")
    func replyTopics() {
        #expect(rpc.acceptsReplyTopic("bleagent/n/rpc/reply/console-1"))
        #expect(!rpc.acceptsReplyTopic("bleagent/n/rpc/reply/"))
        #expect(!rpc.acceptsReplyTopic("bleagent/n/config/set"))
        #expect(!rpc.acceptsReplyTopic("bleagent/other/rpc/reply/x"))
        #expect(!rpc.acceptsReplyTopic("bleagent/n/rpc/reply/#"))
    }
}
