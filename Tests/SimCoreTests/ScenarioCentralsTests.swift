import GATT
import SimCore
import Testing

/// The scenario's `centrals`: virtual centrals with timed steps (docs/blesim.md).
@Suite("scenario centrals")
struct ScenarioCentralsTests {
    static func scenario(_ centrals: String) -> String { #"{ "adapters": 2, "centrals": "# + centrals + " }" }

    @Test("every action parses, with its keys and defaults; steps are put in time order")
    func parses() throws {
        let parsed = try Scenario.parse(
            Self.scenario(
                #"""
                [ { "adapter": 1, "after": "start", "steps": [
                    { "at": 2, "action": "disconnect" },
                    { "at": 0, "action": "connect" },
                    { "at": 0.5, "action": "read", "uuid": "2A19" },
                    { "at": 0.5, "action": "write", "uuid": "2A39", "value": "01" },
                    { "at": 0.6, "action": "write", "uuid": "2A39", "value": { "int": 2, "format": "uint8" },
                      "withResponse": false },
                    { "at": 1, "action": "subscribe", "uuid": "2A37" },
                    { "at": 1.5, "action": "unsubscribe", "uuid": "2A37" } ] },
                  { "steps": [ { "action": "connect" } ] } ]
                """#))
        let rate = BluetoothUUID(uuid16: 0x2A37)
        let point = BluetoothUUID(uuid16: 0x2A39)
        #expect(
            parsed.centrals[0]
                == ScenarioCentral(
                    adapter: 1, trigger: .start,
                    steps: [
                        .init(at: 0, action: .connect),
                        .init(at: 0.5, action: .read(BluetoothUUID(uuid16: 0x2A19))),
                        .init(at: 0.5, action: .write(point, value: [1], withResponse: true)),
                        .init(at: 0.6, action: .write(point, value: [2], withResponse: false)),
                        .init(at: 1, action: .subscribe(rate, true)),
                        .init(at: 1.5, action: .subscribe(rate, false)),
                        .init(at: 2, action: .disconnect),
                    ]))
        #expect(
            parsed.centrals[1]
                == ScenarioCentral(adapter: 0, trigger: .application, steps: [.init(at: 0, action: .connect)]))
        #expect(try Scenario.parse(#"{}"#).centrals.isEmpty)
    }

    @Test(
        "bad centrals name the field",
        arguments: [
            (#"[ { "adapter": 2, "steps": [] } ]"#, "centrals[0].adapter"),
            (#"[ { "steps": [] }, { "adapter": 0, "steps": [] } ]"#, "centrals[1].adapter"),
            (#"[ { "after": "connect", "steps": [] } ]"#, "centrals[0].after"),
            (#"[ { } ]"#, "centrals[0].steps"),
            (#"[ { "steps": [ { "action": "pair" } ] } ]"#, "centrals[0].steps[0].action"),
            (#"[ { "steps": [ { "at": 1 } ] } ]"#, "centrals[0].steps[0].action"),
            (#"[ { "steps": [ { "action": "read" } ] } ]"#, "centrals[0].steps[0].uuid"),
            (#"[ { "steps": [ { "action": "write", "uuid": "2A39" } ] } ]"#, "centrals[0].steps[0].value"),
            (#"[ { "steps": [ { "action": "connect", "uuid": "2A39" } ] } ]"#, "centrals[0].steps[0].uuid"),
            (#"[ { "steps": [ { "action": "read", "uuid": "2A19", "colour": 1 } ] } ]"#, "centrals[0].steps[0].colour"),
        ])
    func errors(centrals: String, path: String) {
        #expect {
            _ = try Scenario.parse(Self.scenario(centrals))
        } throws: { error in
            (error as? ScenarioError)?.path == path
        }
    }
}
