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
            (JSON.array([1]), "expected an object of named params, found an array"),
            (["kind": "lamp"], #"kind: expected one of "bthome", "aggregator", "ibeacon", "eddystone", "unknown""#),
            (["sort": 1], #"sort: expected one of "address", "name", "rssi", "lastSeen", found the integer 1"#),
            (["limit": 0], "limit: expected an integer from 1 to 1000, found the integer 0"),
            (["offset": -1], "offset: expected an integer from 0 to 1000000"),
            (["colour": "red"], "colour: unknown param"),
        ] as [(JSON, String)] {
            do {
                _ = try DevicesQuery(params: params)
                Issue.record("\(params) accepted")
            } catch {
                #expect(error.code == -32602 && error.message.hasPrefix(message), "\(error)")
            }
        }
        for params in [["address": "00:00"], nil] as [JSON?] {
            do {
                _ = try DeviceQuery(params: params)
                Issue.record("\(String(describing: params)) accepted")
            } catch {
                #expect(error.message.hasPrefix("address: "), "\(error)")
            }
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
        // Every problem at once, each with its path, in document order.
        let bad: JSON = [
            "maxDevices": 0, "keyFile": "../keys", "colour": 1, "eventIntervalSeconds": -1,
            "allow": ["addresses": ["nope", "54:48:E6:8F:80:A5", 7], "colour": 1],
            "deny": ["companyIds": [70000], "serviceUuids": "FCD2"],
        ]
        #expect(
            throws: JSONFieldErrors([
                JSONFieldError(path: "colour", "unknown field"),
                JSONFieldError(path: "maxDevices", "expected an integer from 1 to 100000, found the integer 0"),
                JSONFieldError(path: "eventIntervalSeconds", "expected a number from 0 to 86400, found the integer -1"),
                JSONFieldError(
                    path: "keyFile",
                    "expected an absolute path, or a plain file name in the plugin's state directory, found the string \"../keys\""
                ),
                JSONFieldError(path: "allow.colour", "unknown field"),
                JSONFieldError(
                    path: "allow.addresses[0]", "expected a device address AA:BB:CC:DD:EE:FF, found the string \"nope\""
                ),
                JSONFieldError(
                    path: "allow.addresses[2]", "expected a device address AA:BB:CC:DD:EE:FF, found the integer 7"),
                JSONFieldError(
                    path: "deny.companyIds[0]", "expected an integer from 0 to 65535, found the integer 70000"),
                JSONFieldError(path: "deny.serviceUuids", "expected an array, found the string \"FCD2\""),
            ])
        ) { try GatewayConfig(json: bad) }
        #expect(throws: JSONFieldErrors([JSONFieldError(path: "", "expected an object, found an array")])) {
            try GatewayConfig(json: [])
        }
    }

    @Test("each gateway.* method declares its params: wrong types and unknown params are refused with their paths")
    func declaresItsParams() throws {
        #expect(throws: PluginMethodError.self) { try GatewayMethod.devices.arguments(["limit": "5"]) }
        do {
            _ = try GatewayMethod.devices.arguments(["limit": "5", "kind": "lamp", "colour": "red", "offset": 1.5])
            Issue.record("accepted")
        } catch {
            let paths = (error.data?["errors"]?.arrayValue ?? []).compactMap { $0["path"]?.stringValue }
            #expect(Set(paths) == ["limit", "kind", "colour", "offset"], "\(error)")
            #expect(error.code == -32602)
        }
        #expect(throws: PluginMethodError.self) { try GatewayMethod.device.arguments(["address": 5]) }
        #expect(throws: PluginMethodError.self) { try GatewayMethod.device.arguments(nil) }
        #expect(throws: PluginMethodError.self) {
            try GatewayMethod.device.arguments(["address": "54:48:E6:8F:80:A5", "verbose": true])
        }
        #expect(throws: PluginMethodError.self) { try GatewayMethod.stats.arguments(["all": true]) }
        #expect(throws: PluginMethodError.self) { try GatewayMethod.stats.arguments("x") }
        #expect(try DeviceQuery(params: ["address": "54:48:e6:8f:80:a5"]).address.description == "54:48:E6:8F:80:A5")
        #expect(
            try DevicesQuery(params: ["kind": "ibeacon", "sort": "rssi", "offset": 2, "limit": 3])
                == DevicesQuery(kind: .ibeacon, order: .rssi, offset: 2, limit: 3))
        #expect(try DevicesQuery(params: nil) == DevicesQuery())
    }
}

@Suite("The gateway's scan plan")
struct ScanPlanTests {
    @Test(
        "auto and passive ask for a monitor of the decoders' formats; active and configs needing scan responses do not")
    func plansFromTheConfig() throws {
        let auto = ScanPlan(config: GatewayConfig())
        #expect(auto.monitor?.patterns.map(\.description) == ["0/0x16/d2fc", "0/0x16/aafe", "0/0xff/4c000215"])
        #expect(ScanPlan(config: try GatewayConfig(json: ["scan": "passive"])).monitor != nil)
        let active = ScanPlan(config: try GatewayConfig(json: ["scan": "active"]))
        #expect(active.monitor == nil && active.reason == "config scan is active")
        let unknown = ScanPlan(config: try GatewayConfig(json: ["trackUnknown": true]))
        #expect(unknown.monitor == nil && unknown.reason.contains("trackUnknown"))
        let names = ScanPlan(config: try GatewayConfig(json: ["deny": ["namePrefixes": ["Phone"]]]))
        #expect(names.monitor == nil && names.reason.contains("scan responses"))
    }

    @Test("scan is validated with its path: unknown modes, and passive where the config needs active scanning")
    func validatesTheScanField() throws {
        #expect(
            throws: JSONFieldErrors([
                JSONFieldError(
                    path: "scan", "expected one of \"auto\", \"passive\", \"active\", found the string \"quiet\"")
            ])
        ) { try GatewayConfig(json: ["scan": "quiet"]) }
        #expect(throws: JSONFieldErrors.self) { try GatewayConfig(json: ["scan": "passive", "trackUnknown": true]) }
        do {
            _ = try GatewayConfig(json: ["scan": "passive", "allow": ["namePrefixes": ["ATC_"]]])
            Issue.record("accepted")
        } catch {
            #expect(error.errors.map(\.path) == ["scan"])
            #expect(error.description.contains("allow.namePrefixes"))
        }
    }

    @Test("gateway.stats says which mode runs and why")
    func statsShowTheMode() {
        let plan = ScanPlan(config: GatewayConfig())
        let stats = GatewayJSON.stats(
            GatewayStats(), devices: 0, maxDevices: 1, bindKeys: 0,
            scan: ScanStatus(.fallback(reason: "no AdvertisementMonitorManager1"), plan: plan))
        #expect(stats["scan"]?["mode"] == "active")
        #expect(stats["scan"]?["reason"] == "fallback: no AdvertisementMonitorManager1")
        #expect(ScanStatus(.passive, plan: plan).mode == "passive")
    }
}
