import GATT
import SimCore
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a text file next to this source file (fixtures) or in the repository.
func readText(_ relativePath: String, from file: String = #filePath) throws -> String {
    let directory = String(file[..<(file.lastIndex(of: "/") ?? file.endIndex)])
    let path = directory + "/" + relativePath
    guard let handle = fopen(path, "r") else { throw ScenarioError(path: path, message: "cannot open") }
    defer { fclose(handle) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = fread(&buffer, 1, buffer.count, handle)
        if count <= 0 { break }
        bytes += buffer[0..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}

@Suite("Scenario files")
struct ScenarioParserTests {
    @Test("the shipped default scenario parses: one adapter, terminals, a heart-rate sensor, noise")
    func defaultScenario() throws {
        let scenario = try Scenario.parse(try readText("../../sim/scenarios/default.json"))
        #expect(scenario.adapters.count == 1)
        #expect(scenario.adapters[0].address.description == "00:AA:01:00:00:00")
        let names = scenario.devices.compactMap(\.advertisement.name)
        #expect(names.filter { $0.hasPrefix("PayTerm-") }.count == 3)
        #expect(scenario.devices.contains { $0.advertisement.serviceUUIDs.contains(Fixture.hrs) })
        #expect(scenario.devices.count >= 6)
    }

    @Test("a full fixture: adapters with positions and sensitivity, devices with every field")
    func fixture() throws {
        let scenario = try Scenario.parse(try readText("Fixtures/two-adapters.json"))
        #expect(scenario.seed == 3)
        #expect(scenario.temporaryTimeout == 5)
        #expect(scenario.adapters.map(\.name) == ["left", "right"])
        #expect(scenario.adapters[1].position == Position(x: 10, y: 0))
        #expect(scenario.adapters[1].sensitivity == -80)
        #expect(scenario.devices[0].addressType == .random)
        #expect(scenario.devices[0].advertisement.txPower == 0)
        #expect(scenario.devices[1].radio.path == .fixed(Position(x: 9, y: 0)))
    }

    @Test("advertising data: hex bytes, company ids as numbers or 0x strings, 16-bit UUIDs widened")
    func advertising() throws {
        let scenario = try Scenario.parse(
            """
            {"devices": [{"address": "C0:00:00:00:00:01", "advertising": {
              "flags": null, "name": "Tag", "nameComplete": false, "appearance": 832,
              "manufacturerData": [{"company": "0x004C", "data": "0215"}, {"company": 89, "data": ""}],
              "serviceData": [{"uuid": "180F", "data": "64"}]}}]}
            """)
        let ad = scenario.devices[0].advertisement
        #expect(ad.flags == nil)
        #expect(!ad.nameIsComplete)
        #expect(ad.appearance == 832)
        #expect(
            ad.manufacturerData == [
                ManufacturerDatum(company: 0x4C, data: [0x02, 0x15]), ManufacturerDatum(company: 89, data: []),
            ])
        #expect(ad.serviceData == [ServiceDatum(uuid: Fixture.battery, data: [0x64])])
    }

    @Test("adapters may be a count of standard adapters")
    func adapterCount() throws {
        let scenario = try Scenario.parse(#"{"adapters": 3}"#)
        #expect(scenario.adapters.map(\.name) == ["blesim #0", "blesim #1", "blesim #2"])
        #expect(scenario.adapters[2].address.description == "00:AA:01:00:00:02")
    }

    @Test("waypoints with loop")
    func waypoints() throws {
        let scenario = try Scenario.parse(
            #"{"devices": [{"address": "C0:00:00:00:00:01", "rssi": {"waypoints": [{"at": 0, "distance": 1}, {"at": 10, "position": [3, 4]}], "loop": true}}]}"#
        )
        #expect(
            scenario.devices[0].radio.path
                == .waypoints(
                    [
                        Waypoint(at: 0, position: Position(x: 1, y: 0)),
                        Waypoint(at: 10, position: Position(x: 3, y: 4)),
                    ],
                    loop: true))
    }

    @Test(
        "errors name the field",
        arguments: [
            (
                #"{"devices": [{"address": "C0:00:00:00:00:0A"}, {"address": "C0:00:00:00:00:0B"}, {"address": "C0:00:00:00:00:01", "rssi": {"distance": "far"}}]}"#,
                "devices[2].rssi.distance: expected a number"
            ),
            (#"{"devices": [{"address": "C0:00:00:00:00:01"}, {}]}"#, "devices[1].address: missing"),
            (
                #"{"devices": [{"address": "nope"}]}"#,
                #"devices[0].address: expected an address like "AA:BB:CC:DD:EE:FF""#
            ),
            (
                #"{"devices": [{"address": "C0:00:00:00:00:01", "advertising": {"nmae": "x"}}]}"#,
                "devices[0].advertising.nmae: unknown key (expected one of appearance, flags, manufacturerData, name, nameComplete, serviceData, serviceUUIDs, txPower)"
            ),
            (
                #"{"devices": [{"address": "C0:00:00:00:00:01", "advertising": {"manufacturerData": [{"company": 1, "data": "0g"}]}}]}"#,
                #"devices[0].advertising.manufacturerData[0].data: expected hex digit pairs like "0102ff""#
            ),
            (
                #"{"devices": [{"address": "C0:00:00:00:00:01", "intervalMs": 5}]}"#,
                "devices[0].intervalMs: expected a number in 20.0...10240.0"
            ),
            (
                #"{"devices": [{"address": "C0:00:00:00:00:01"}, {"address": "C0:00:00:00:00:01"}]}"#,
                "devices[1].address: duplicate address C0:00:00:00:00:01"
            ),
            (#"{"adapters": 0}"#, "adapters: expected an integer in 1...16"),
            (
                #"{"devices": [{"address": "C0:00:00:00:00:01", "rssi": {"waypoints": [{"at": 5, "distance": 1}, {"at": 5, "distance": 2}]}}]}"#,
                "devices[0].rssi.waypoints[1].at: times must increase"
            ),
            (#"[1]"#, "expected an object"),
        ])
    func errors(text: String, message: String) {
        #expect(throws: ScenarioError.self) { try Scenario.parse(text) }
        do {
            _ = try Scenario.parse(text)
        } catch {
            #expect(error.description == message)
        }
    }

    @Test("an advertisement must fit in advertising data plus scan response, 31 bytes each")
    func advertisementSize() throws {
        let fits =
            #"{"devices": [{"address": "C0:00:00:00:00:01", "advertising": {"name": "A name of twenty-nine bytes!", "manufacturerData": [{"company": 76, "data": "0215e2c56db5dffb48d2b060d0f5a71096e000010002c5"}]}}]}"#
        #expect(throws: Never.self) { try Scenario.parse(fits) }
        let tooBig =
            #"{"devices": [{"address": "C0:00:00:00:00:01", "advertising": {"name": "A name of twenty-nine bytes!!", "manufacturerData": [{"company": 76, "data": "0215e2c56db5dffb48d2b060d0f5a71096e000010002c5"}, {"company": 89, "data": "01"}]}}]}"#
        do {
            _ = try Scenario.parse(tooBig)
            Issue.record("accepted an advertisement of more than 62 bytes")
        } catch {
            #expect(error.description.hasPrefix("devices[0].advertising: "), "\(error)")
            #expect(error.description.hasSuffix("do not fit in advertising data and scan response (31 + 31 bytes)"))
        }
    }

    @Test("JSON syntax errors say so")
    func syntax() {
        do {
            _ = try Scenario.parse("{\"seed\": }")
            Issue.record("parsed")
        } catch {
            #expect(error.description.hasPrefix("not JSON: line 1"))
        }
    }
}
