import BLE
import GATT
import JSON
import RoleKit
import SensorGateway
import Testing

/// gateway.* params and results.
@Suite struct GatewayControlTests {
    static func engine() -> GatewayEngine {
        var engine = GatewayEngine(config: GatewayConfig())
        let ads: [(UInt64, String?, AdvertisementData, Int)] = [
            (3, "ATC_3", AdvertisementData(localName: "ATC_3", serviceData: [.bthome: bytes("40 02 ca 09")]), -80),
            (1, nil, AdvertisementData(serviceData: [.bthome: bytes("40 01 5d")]), -50),
            (
                2, "Beacon",
                AdvertisementData(
                    localName: "Beacon",
                    manufacturerData: [
                        0x004C: bytes("02 15 e2 c5 6d b5 df fb 48 d2 b0 60 d0 f5 a7 10 96 e0 00 01 00 02 c5")
                    ]),
                -65
            ),
        ]
        for (index, (value, _, advertisement, rssi)) in ads.enumerated() {
            _ = engine.ingest(
                GatewayReport(address: DeviceAddress(value: value), rssi: rssi, advertisement: advertisement),
                at: .seconds(index + 1))
        }
        return engine
    }

    static let clock = GatewayClock(unixOrigin: 1_700_000_000_000)

    func addresses(_ result: JSON) -> [String] {
        (result["devices"]?.arrayValue ?? []).compactMap { $0["address"]?.stringValue }
    }

    @Test func listsSortedFilteredAndPaged() throws {
        let entries = Self.engine().table.entries
        let byAddress = GatewayJSON.devices(entries, DevicesQuery(), clock: Self.clock)
        #expect(addresses(byAddress) == ["00:00:00:00:00:01", "00:00:00:00:00:02", "00:00:00:00:00:03"])
        #expect(byAddress["total"] == 3 && byAddress["next"] == .null)
        #expect(
            addresses(GatewayJSON.devices(entries, try DevicesQuery(params: ["sort": "rssi"]), clock: Self.clock)) == [
                "00:00:00:00:00:01", "00:00:00:00:00:02", "00:00:00:00:00:03",
            ])
        #expect(
            addresses(GatewayJSON.devices(entries, try DevicesQuery(params: ["sort": "name"]), clock: Self.clock)) == [
                "00:00:00:00:00:03", "00:00:00:00:00:02", "00:00:00:00:00:01",
            ])
        #expect(
            addresses(GatewayJSON.devices(entries, try DevicesQuery(params: ["sort": "lastSeen"]), clock: Self.clock))
                == [
                    "00:00:00:00:00:02", "00:00:00:00:00:01", "00:00:00:00:00:03",
                ])
        let page = GatewayJSON.devices(
            entries, try DevicesQuery(params: ["kind": "bthome", "limit": 1]), clock: Self.clock)
        #expect(addresses(page) == ["00:00:00:00:00:01"])
        #expect(page["total"] == 2 && page["next"] == 1)
        let next = GatewayJSON.devices(
            entries, try DevicesQuery(params: ["kind": "bthome", "offset": 1]), clock: Self.clock)
        #expect(addresses(next) == ["00:00:00:00:00:03"])
        let first = try #require(next["devices"]?[0])
        #expect(first["name"] == "ATC_3" && first["kind"] == "bthome" && first["rssi"] == -80)
        #expect(first["lastSeen"] == .int(1_700_000_000_000 + 1000))
        #expect(
            first["readings"]?[0] == [
                "name": "temperature", "kind": "sensor", "value": .double(25.06), "unit": "°C",
                "at": .int(1_700_000_001_000),
            ])
    }

    @Test func refusesBadParams() {
        for (params, message) in [
            (JSON.array([]), "params: expected an object"),
            (["kind": "lamp"], "kind: expected one of bthome, aggregator, ibeacon, eddystone, unknown"),
            (["sort": 1], "sort: expected one of address, name, rssi, lastSeen"),
            (["limit": 0], "limit: expected an integer from 1 to 1000"),
            (["offset": -1], "offset: expected an integer from 0 to 1000000"),
            (["colour": "red"], "colour: unknown parameter"),
        ] as [(JSON, String)] {
            #expect(throws: PluginMethodError.invalidParams(message)) { try DevicesQuery(params: params) }
        }
        #expect(throws: PluginMethodError.invalidParams("address: expected a device address AA:BB:CC:DD:EE:FF")) {
            try DeviceQuery(params: ["address": "00:00"])
        }
        #expect(throws: PluginMethodError.invalidParams("address: expected a device address AA:BB:CC:DD:EE:FF")) {
            try DeviceQuery(params: nil)
        }
    }

    @Test func oneDeviceAndTheCounters() throws {
        let engine = Self.engine()
        let entry = try #require(engine.table.entry(DeviceAddress(value: 2)))
        let device = GatewayJSON.device(entry, clock: Self.clock)
        #expect(device["kind"] == "ibeacon" && device["errors"] == .object([:]) && device["lastError"] == .null)
        #expect(
            (device["readings"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue } == [
                "major", "measured_power", "minor", "uuid",
            ])
        let stats = GatewayJSON.stats(engine.stats, devices: 3, maxDevices: 2048, bindKeys: 0)
        #expect(stats["reportsIn"] == 3 && stats["decoded"] == 3 && stats["devices"] == 3)
        #expect(stats["decodeErrors"] == .object([:]))
    }

    @Test func readsTheConfig() throws {
        let config = try GatewayConfig(json: [
            "maxDevices": 10, "keyFile": "keys",
            "allow": ["addresses": ["54:48:E6:8F:80:A5"], "serviceUuids": ["FCD2"]],
            "deny": ["companyIds": [76]],
        ])
        #expect(config.maxDevices == 10 && config.keyFile == "keys")
        #expect(config.allow?.serviceUUIDs == [.bthome])
        #expect(config.deny?.companyIDs == [76])
        for (json, path, message) in [
            (["maxDevices": 0], "maxDevices", "expected an integer from 1 to 100000"),
            (
                ["keyFile": "../keys"], "keyFile",
                "expected an absolute path, or a plain file name in the plugin's state directory"
            ),
            (["allow": ["addresses": ["nope"]]], "allow.addresses[0]", "expected AA:BB:CC:DD:EE:FF"),
            (["deny": ["companyIds": [70000]]], "deny.companyIds[0]", "expected an integer from 0 to 65535"),
            (["allow": ["colour": 1]], "allow.colour", "unknown field"),
            (["eventIntervalSeconds": -1], "eventIntervalSeconds", "expected a number from 0.0 to 86400.0"),
        ] as [(JSON, String, String)] {
            #expect(throws: PluginConfigError(path: path, message)) { try GatewayConfig(json: json) }
        }
    }
}
