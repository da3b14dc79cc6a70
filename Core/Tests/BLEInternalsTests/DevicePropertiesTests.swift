import GATT
import Testing

@testable import BLE

@Suite struct DevicePropertiesTests {
    let path = "/org/bluez/hci0/dev_C0_00_00_00_00_01"
    let adapter = "/org/bluez/hci0"

    /// Every kept property, each with the D-Bus type and form bluetoothd sends.
    var usual: PropertyMap {
        [
            "Address": .string("C0:00:00:00:00:01"), "AddressType": .string("random"), "Name": .string("D1"),
            "Alias": .string("D1"), "Paired": .bool(false), "Connected": .bool(false),
            "ServicesResolved": .bool(false), "RSSI": .int(-61), "TxPower": .int(4),
            "UUIDs": .array([.string("0000180d-0000-1000-8000-00805f9b34fb")]),
            "ManufacturerData": .dictionary([.uint(0x004C): .bytes([1, 2]), .uint(0x0006): .bytes([])]),
            "ServiceData": .dictionary([.string("0000fcd2-0000-1000-8000-00805f9b34fb"): .bytes([0x40, 1])]),
            "AdvertisingFlags": .bytes([0x06]), "Adapter": .objectPath(adapter),
        ]
    }

    @Test func propertiesInTheirUsualFormAreKeptTypedAndReadBackExactly() {
        let properties = DeviceProperties(usual)
        #expect(properties.unusual.isEmpty)
        #expect(properties.propertyMap == usual)
        #expect(Set(properties.keys) == Set(usual.keys))
        #expect(properties.model(path: path, adapterPath: adapter) == expectedModel(usual))
    }

    @Test func propertiesInAnyOtherFormAreKeptAsSentAndReadAsBefore() {
        var odd = usual
        odd["UUIDs"] = .array([.string("180D"), .string("not a uuid"), .string("0000180F-0000-1000-8000-00805F9B34FB")])
        odd["ManufacturerData"] = .dictionary([.int(76): .bytes([1]), .uint(6): .array([.uint(2), .uint(3)])])
        odd["ServiceData"] = .dictionary([.string("fcd2"): .bytes([0x40])])
        odd["RSSI"] = .uint(70)
        odd["TxPower"] = .int(40_000)
        odd["AddressType"] = .string("le-random")
        odd["Adapter"] = .string(adapter)
        odd["Name"] = .objectPath("/named")
        odd["AdvertisingFlags"] = .array([.uint(2)])
        let properties = DeviceProperties(odd)
        #expect(properties.propertyMap == odd)
        #expect(properties.adapterPath == adapter)
        #expect(properties.model(path: path, adapterPath: adapter) == expectedModel(odd))
    }

    @Test("the typed view reads names, aliases and flags as from the D-Bus values")
    func theTypedViewMatchesTheOneReadFromTheDBusValues() {
        let address = "C0:00:00:00:00:01"
        let variants: [PropertyMap] = [
            ["Address": .string(address), "Alias": .string("C0-00-00-00-00-01")],
            ["Address": .string(address), "Alias": .string("c0-00-00-00-00-01")],
            ["Address": .string(address), "Alias": .string("Kitchen"), "AdvertisingFlags": .bytes([0x04])],
            ["Address": .string(address), "Name": .string("D7"), "Alias": .string("Kitchen")],
            ["Address": .string(address), "AdvertisingFlags": .bytes([])],
            ["Address": .string(address), "Connected": .bool(true), "Paired": .bool(true)],
            ["Alias": .string("no address")],
        ]
        for map in variants {
            let properties = DeviceProperties(map)
            #expect(properties.unusual.isEmpty)
            #expect(properties.propertyMap == map)
            #expect(properties.model(path: path, adapterPath: adapter) == expectedModel(map), "\(map)")
        }
    }

    @Test func onlyPropertiesWhoseValueDiffersAreReportedAsChanged() {
        var properties = DeviceProperties(usual)
        #expect(properties.apply(usual, []).isEmpty)
        #expect(properties.apply(["RSSI": .int(-61), "Bonded": .bool(true)], ["Trusted"]).isEmpty, "not kept: ignored")
        #expect(
            properties.apply(["Alias": .string("Kitchen")], []) == ["Alias"], "not in the typed view, still a change")
        #expect(properties.apply(["AdvertisingFlags": .bytes([0x06, 0x00])], []) == ["AdvertisingFlags"])
        #expect(properties.apply(["Adapter": .string(adapter)], []) == ["Adapter"], "same text, other D-Bus type")
        #expect(properties.apply(["Adapter": .objectPath(adapter)], []) == ["Adapter"])
        #expect(properties.unusual.isEmpty)
        #expect(properties.apply(["RSSI": .uint(61)], []) == ["RSSI"])
        #expect(properties.apply(["RSSI": .int(61)], []) == ["RSSI"], "the same number, now in the usual form")
        #expect(properties.apply([:], ["RSSI", "Name", "Bonded"]).sorted() == ["Name", "RSSI"])
        #expect(properties.apply([:], ["RSSI"]).isEmpty)
        var expected = usual
        expected["Alias"] = .string("Kitchen")
        expected["AdvertisingFlags"] = .bytes([0x06, 0x00])
        expected["RSSI"] = nil
        expected["Name"] = nil
        #expect(properties.propertyMap == expected)
        #expect(properties.model(path: path, adapterPath: adapter) == expectedModel(expected))
    }

    @Test func advertisedDataSentAgainIsNoChangeAndAnyDifferenceIs() {
        var properties = DeviceProperties(usual)
        let manufacturer: [PropertyValue] = [
            .dictionary([.uint(0x0006): .bytes([]), .uint(0x004C): .bytes([1, 2])]),
            .dictionary([.uint(0x004C): .bytes([1, 3]), .uint(0x0006): .bytes([])]),
            .dictionary([.uint(0x004C): .bytes([1, 3]), .uint(0x0007): .bytes([])]),
            .dictionary([.uint(0x004C): .bytes([1, 3])]),
            .dictionary([.int(0x004C): .bytes([1, 3])]),
        ]
        let changes = manufacturer.map { properties.apply(["ManufacturerData": $0], []) }
        #expect(
            changes == [[], ["ManufacturerData"], ["ManufacturerData"], ["ManufacturerData"], ["ManufacturerData"]])
        let service = PropertyValue.dictionary([.string("0000fcd2-0000-1000-8000-00805f9b34fb"): .bytes([0x40, 1])])
        #expect(properties.apply(["ServiceData": service], []).isEmpty)
        #expect(
            properties.apply(["ServiceData": .dictionary([.string("fcd2"): .bytes([0x40, 1])])], []) == ["ServiceData"])
        let uuids: [PropertyValue] = [
            .array([.string("0000180d-0000-1000-8000-00805f9b34fb")]),
            .array([.string("0000180f-0000-1000-8000-00805f9b34fb")]),
            .array([.string("0000180f-0000-1000-8000-00805f9b34fb"), .string("0000180d-0000-1000-8000-00805f9b34fb")]),
        ]
        #expect(uuids.map { properties.apply(["UUIDs": $0], []) } == [[], ["UUIDs"], ["UUIDs"]])
        #expect(properties.value(of: "ManufacturerData") == manufacturer[4])
        #expect(properties.value(of: "UUIDs") == uuids[2])
    }

    @Test func aMadeUpAliasStaysTheOldAddressWhenTheAddressChanges() {
        var properties = DeviceProperties([
            "Alias": .string("C0-00-00-00-00-01"), "Address": .string("C0:00:00:00:00:01"),
        ])
        #expect(properties.alias == .madeUp)
        #expect(properties.apply(["Address": .string("C0:00:00:00:00:02")], []) == ["Address"])
        #expect(properties.value(of: "Alias") == .string("C0-00-00-00-00-01"))
        #expect(properties.apply(["Alias": .string("C0-00-00-00-00-02")], []) == ["Alias"])
        #expect(properties.alias == .madeUp)
        #expect(properties.apply([:], ["Address"]) == ["Address"])
        #expect(properties.value(of: "Alias") == .string("C0-00-00-00-00-02"))
        #expect(properties.model(path: path, adapterPath: adapter) == nil, "no address, no typed view")
    }

    @Test("a value that would take a device past its byte budget is refused and counted; the property keeps its value")
    func oversizedValuesAreRefused() {
        var refused = 0
        var properties = DeviceProperties(usual, refused: &refused)
        #expect(refused == 0)
        let long = String(repeating: "n", count: DeviceProperties.byteBudget)
        let big: [UInt8] = Array(repeating: 7, count: DeviceProperties.byteBudget)
        let oversized: PropertyMap = [
            "Name": .string(long), "ManufacturerData": .dictionary([.uint(0x004C): .bytes(big)]),
            "ServiceData": .dictionary([.string("0000fcd2-0000-1000-8000-00805f9b34fb"): .bytes(big)]),
            "UUIDs": .array(Array(repeating: .string("0000180d-0000-1000-8000-00805f9b34fb"), count: 300)),
            "AdvertisingFlags": .bytes(big), "Alias": .string(long),
            "RSSI": .string(long), "Adapter": .objectPath("/" + long),
        ]
        for (key, value) in oversized {
            #expect(properties.apply([key: value], [], refused: &refused) == [], "\(key)")
        }
        #expect(refused == oversized.count)
        #expect(properties.propertyMap == usual, "every property kept its value")

        // Within the budget alone, but not beside what the device already holds.
        let half = Array(repeating: UInt8(1), count: DeviceProperties.byteBudget / 2)
        #expect(properties.apply(["AdvertisingFlags": .bytes(half)], [], refused: &refused) == ["AdvertisingFlags"])
        let rest = PropertyValue.dictionary([.uint(6): .bytes(half)])
        #expect(properties.apply(["ManufacturerData": rest], [], refused: &refused) == [])
        #expect(refused == oversized.count + 1)
        // Once the large value is gone the other fits, and a removal is never refused.
        #expect(properties.apply([:], ["AdvertisingFlags"], refused: &refused) == ["AdvertisingFlags"])
        #expect(properties.apply(["ManufacturerData": rest], [], refused: &refused) == ["ManufacturerData"])
        #expect(refused == oversized.count + 1)

        // A new device with one oversized value keeps the others.
        var added = usual
        added["Name"] = .string(long)
        var addedRefusals = 0
        let newcomer = DeviceProperties(added, refused: &addedRefusals)
        #expect(addedRefusals == 1)
        #expect(newcomer.value(of: "Name") == nil)
        #expect(newcomer.value(of: "Address") == usual["Address"])
    }

    @Test("the mirror counts the values it refused, from signals and from new devices")
    func theMirrorCountsRefusedValues() {
        var mirror = ObjectTreeMirror()
        _ = mirror.applySnapshot([:], now: .zero)
        let long = PropertyValue.string(String(repeating: "x", count: DeviceProperties.byteBudget + 1))
        var added = usual
        added["Name"] = long
        _ = mirror.receive(.interfacesAdded(path: path, interfaces: [BlueZInterface.device: added]), now: .zero)
        #expect(mirror.counters.oversizedValues == 1)
        let changes = mirror.receive(
            .propertiesChanged(path: path, interface: BlueZInterface.device, changed: ["Alias": long], invalidated: []),
            now: .zero)
        #expect(changes.isEmpty)
        #expect(mirror.counters.oversizedValues == 2)
        #expect(mirror.properties(at: path, interface: BlueZInterface.device)?["Alias"] == usual["Alias"])
    }

    private func expectedModel(_ map: PropertyMap) -> DeviceModel? {
        DeviceModel(path: path, adapterPath: adapter, device1: map)
    }
}
