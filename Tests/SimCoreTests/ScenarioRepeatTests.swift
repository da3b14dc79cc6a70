import GATT
import SimCore
import Testing

/// `repeat`: thousands of devices from one template.
@Suite("scenario repeat")
struct ScenarioRepeatTests {
    @Test("copies get consecutive addresses, numbered names and distances spread from near to far")
    func copies() throws {
        let scenario = try Scenario.parse(
            """
            { "devices": [
              { "address": "C0:00:00:00:00:FE", "advertising": { "name": "Tag-{n}" }, "rssi": { "noise": 2 },
                "repeat": { "count": 2000, "distance": [1, 20.99] } },
              { "address": "D0:00:00:00:00:01" } ] }
            """)
        #expect(scenario.devices.count == 2001)
        #expect(scenario.devices[0].address == DeviceAddress("C0:00:00:00:00:FE"))
        #expect(scenario.devices[2].address == DeviceAddress("C0:00:00:00:01:00"))
        #expect(scenario.devices[1999].address == DeviceAddress("C0:00:00:00:08:CD"))
        #expect(scenario.devices[0].advertisement.name == "Tag-1")
        #expect(scenario.devices[1999].advertisement.name == "Tag-2000")
        #expect(scenario.devices[0].radio.path == .fixed(Position(x: 1, y: 0)))
        #expect(scenario.devices[1999].radio.path == .fixed(Position(x: 20.99, y: 0)))
        #expect(scenario.devices[1000].radio.noise == 2)
        #expect(Set(scenario.devices.map(\.address)).count == 2001)
    }

    @Test(
        "bad repeats name the field",
        arguments: [
            (#"{ "address": "C0:00:00:00:00:01", "repeat": { } }"#, "devices[0].repeat.count"),
            (#"{ "address": "C0:00:00:00:00:01", "repeat": { "count": 0 } }"#, "devices[0].repeat.count"),
            (#"{ "address": "FF:FF:FF:FF:FF:FE", "repeat": { "count": 3 } }"#, "devices[0].repeat.count"),
            (
                #"{ "address": "C0:00:00:00:00:01", "repeat": { "count": 2, "distance": [1] } }"#,
                "devices[0].repeat.distance"
            ),
            (#"{ "address": "C0:00:00:00:00:01", "repeat": { "count": 2, "every": 1 } }"#, "devices[0].repeat.every"),
            (
                #"{ "address": "C0:00:00:00:00:01", "advertising": { "name": "ABCDEFGHIJKLMNOPQRSTUVWXYZ{n}" }, "repeat": { "count": 1000 } }"#,
                "devices[0].advertising.name"
            ),
        ])
    func bad(device: String, path: String) {
        #expect {
            _ = try Scenario.parse(#"{ "devices": [ \#(device) ] }"#)
        } throws: { error in
            (error as? ScenarioError)?.path == path
        }
    }

    @Test("a copy that collides with another device is a duplicate address at the entry")
    func duplicate() {
        #expect {
            _ = try Scenario.parse(
                #"{ "devices": [ { "address": "C0:00:00:00:00:05" }, { "address": "C0:00:00:00:00:01", "repeat": { "count": 9 } } ] }"#
            )
        } throws: { error in
            (error as? ScenarioError)?.path == "devices[1].address"
        }
    }
}
