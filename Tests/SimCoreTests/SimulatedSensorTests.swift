import BTHomeCrypto
import GATT
import SimCore
import Testing

/// Simulated sensors: BTHome service data that changes with each measurement and repeats between them,
/// encrypted when the scenario gives a bind key, and Eddystone TLM frames.
@Suite struct SimulatedSensorTests {
    static let address = DeviceAddress("54:48:E6:8F:80:A5")!
    static let key = BTHomeBindKey(hex: "231d39c1d7cc1ab1aee224cd096db932")!

    static func sensor(_ json: String) throws -> SimulatedSensor {
        let scenario = try Scenario.parse(
            #"{"devices": [{"address": "54:48:E6:8F:80:A5", "advertising": {"name": "S"}, "sensor": \#(json)}]}"#)
        return try #require(scenario.devices.first?.sensor)
    }

    @Test func plainBTHomeFollowsTheWaveformWithAPacketIDPerMeasurement() throws {
        let sensor = try Self.sensor(
            #"{"format": "bthome", "measureSeconds": 2, "objects": [{"kind": "humidity", "base": 45.5},"#
                + #" {"kind": "temperature", "base": 20, "amplitude": 5, "periodSeconds": 40}, {"kind": "battery", "base": 93}]}"#
        )
        #expect(sensor.measurement(at: 3.9) == 1 && sensor.measurement(at: 4) == 2)
        let first = sensor.serviceData(address: Self.address, measurement: 1, intervalMilliseconds: 100)
        let decoded = try BTHomeServiceData.decode(first)
        #expect(decoded.objects.map(\.id) == [0x00, 0x01, 0x02, 0x03])
        #expect(decoded.objects[0] == .packetID(1) && decoded.objects[1] == .battery(93))
        #expect(decoded.objects[3] == .humidity(hundredthsPercent: 4550))
        if case .temperature(let raw) = decoded.objects[2] {
            #expect((1500...2500).contains(raw))
        } else {
            Issue.record()
        }
        // The same measurement gives the same bytes; the next one another packet id and another temperature.
        #expect(sensor.serviceData(address: Self.address, measurement: 1, intervalMilliseconds: 100) == first)
        let next = try BTHomeServiceData.decode(
            sensor.serviceData(address: Self.address, measurement: 2, intervalMilliseconds: 100))
        #expect(next.objects[0] == .packetID(2) && next.objects[2] != decoded.objects[2])
        // Another address is at another point of its cycle.
        let other = try BTHomeServiceData.decode(
            sensor.serviceData(address: DeviceAddress("54:48:E6:8F:80:A6")!, measurement: 1, intervalMilliseconds: 100))
        #expect(other.objects[2] != decoded.objects[2])
    }

    @Test func encryptedBTHomeOpensWithTheKeyAndCountsUp() throws {
        let sensor = try Self.sensor(
            #"{"format": "bthome", "bindKey": "231d39c1d7cc1ab1aee224cd096db932", "packetId": false,"#
                + #" "objects": [{"kind": "temperature", "base": 25.06}, {"kind": "door", "base": 1}]}"#)
        for measurement: Int64 in [0, 7] {
            let data = sensor.serviceData(address: Self.address, measurement: measurement, intervalMilliseconds: 100)
            #expect(data.first == 0x41)
            let opened = try BTHomeEncryption.open(serviceData: data, address: Self.address.bytes, key: Self.key)
            #expect(opened.objects == [0x02, 0xCA, 0x09, 0x1A, 0x01])
            #expect(opened.counter == UInt32(measurement + 1))
        }
    }

    @Test func eddystoneTLM() throws {
        let sensor = try Self.sensor(
            #"{"format": "eddystoneTLM", "measureSeconds": 1, "voltage": {"base": 3.0}, "temperature": {"base": 23.5}}"#
        )
        #expect(sensor.uuid == BluetoothUUID(uuid16: 0xFEAA))
        // 60 s after the start at one advertisement per 100 ms: 600 PDUs, 600 tenths of a second.
        #expect(
            sensor.serviceData(address: Self.address, measurement: 60, intervalMilliseconds: 100) == [
                0x20, 0x00, 0x0B, 0xB8, 0x17, 0x80, 0x00, 0x00, 0x02, 0x58, 0x00, 0x00, 0x02, 0x58,
            ])
    }

    @Test func theWorldAdvertisesEachMeasurement() throws {
        var world = SimWorld(
            scenario: try Scenario.parse(
                #"{"devices": [{"address": "54:48:E6:8F:80:A5", "intervalMs": 100, "advertising": {"name": "S"},"#
                    + #" "sensor": {"format": "bthome", "measureSeconds": 1, "objects": [{"kind": "battery", "base": 50}]}}]}"#
            ))
        _ = try world.withAdapter(0) { adapter throws(BlueZError) in
            _ = try adapter.setDiscoveryFilter(owner: ":1.1", [("DuplicateData", .bool(true))])
            return try adapter.startDiscovery(owner: ":1.1")
        }
        var packetIDs: [UInt8] = []
        for step in 1...25 {
            for event in world.advance(to: .milliseconds(Int64(step) * 100)).flatMap(\.events) {
                let properties: [Property]
                switch event {
                case .deviceAdded(_, let all): properties = all
                case .deviceChanged(_, let changed, _): properties = changed
                default: continue
                }
                for case .serviceData(let data) in properties.map(\.value) {
                    if let id = data.first?.data.dropFirst(2).first { packetIDs.append(id) }
                }
            }
        }
        // Every advertisement is reported (duplicates on): about ten per measurement, three measurements.
        #expect(packetIDs.count >= 20)
        #expect(Set(packetIDs) == [0, 1, 2])
        #expect(packetIDs == packetIDs.sorted())
    }

    @Test func scenarioErrorsNameTheField() {
        for (sensor, message) in [
            (#"{"format": "bthome"}"#, "devices[0].sensor.objects: missing"),
            (
                #"{"format": "bthome", "objects": [{"kind": "lamp"}]}"#,
                "devices[0].sensor.objects[0].kind: expected one of"
            ),
            (
                #"{"format": "bthome", "bindKey": "00", "objects": [{"kind": "door"}]}"#,
                "devices[0].sensor.bindKey: expected 32 hex digits"
            ),
            (#"{"format": "eddystoneTLM", "objects": []}"#, "devices[0].sensor.objects: only with format bthome"),
            (#"{"format": "ibeacon"}"#, "devices[0].sensor.format: expected bthome or eddystoneTLM"),
        ] {
            #expect(
                performing: {
                    _ = try Scenario.parse(#"{"devices": [{"address": "54:48:E6:8F:80:A5", "sensor": \#(sensor)}]}"#)
                }, throws: { "\($0)".contains(message) })
        }
        // A name and manufacturer data that fill both PDUs leave no room for the service data.
        #expect(
            performing: {
                _ = try Scenario.parse(
                    #"{"devices": [{"address": "54:48:E6:8F:80:A5", "advertising": {"name": "\#(String(repeating: "n", count: 25))", "manufacturerData": [{"company": 1, "data": "\#(String(repeating: "00", count: 26))"}]},"#
                        + #" "sensor": {"format": "bthome", "bindKey": "231d39c1d7cc1ab1aee224cd096db932", "objects": [{"kind": "pressure"}, {"kind": "illuminance"}, {"kind": "co2"}, {"kind": "temperature"}, {"kind": "humidity"}]}}]}"#
                )
            }, throws: { "\($0)".contains("devices[0].sensor: with the advertising:") })
    }
}
