import ControlProtocol
import JSON
import Testing

@testable import AgentCore

@Suite("event notification lines")
struct EventLineTests {
    @Test(
        "the spliced line is the compact serialisation of the notification",
        arguments: [
            AgentEvent(kind: .state, data: ["agentState": "reloaded", "roleState": ["state": "running"]]),
            AgentEvent(
                kind: .value, data: ["id": "a/b\\c\"d\n\u{1}é☃", "value": "0648", "n": 1.5, "list": [1, .null, true]]),
            AgentEvent(kind: .discovered, data: .null),
            AgentEvent(kind: .connected, data: "text"),
        ])
    func splicedLineMatchesTheSerialisation(_ event: AgentEvent) {
        for (sequence, dropped) in [(Int64(1), Int64(0)), (123_456_789_012, 42), (7, 7)] {
            let params: JSON = [
                "kind": .string(event.kind.rawValue), "seq": .int(sequence), "dropped": .int(dropped),
                "data": event.data,
            ]
            let expected = RPCMessage.notification(method: ControlAPI.eventMethod, params: params).serialized()
            #expect(EventLine(event).bytes(sequence: sequence, dropped: dropped) == Array((expected + "\n").utf8))
        }
    }
}
