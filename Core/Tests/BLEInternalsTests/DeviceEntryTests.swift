import GATT
import Testing

@testable import BLE

@Suite struct DeviceEntryTests {
    let device = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF"
    let t0 = BLEInstant.zero

    func rssi(_ path: String, _ value: Int64) -> ObjectTreeDelta {
        .propertiesChanged(
            path: path, interface: BlueZInterface.device, changed: ["RSSI": .int(value)], invalidated: [])
    }

    @Test("a device heard again within the recency resolution keeps its place; after it, it moves to the newest end")
    func recencyFollowsHearingToWithinItsResolution() {
        var mirror = ObjectTreeMirror(limits: .init(staleDeviceAge: .seconds(600), maximumDevices: 1))
        #expect(mirror.recencyResolution == .seconds(1))
        _ = mirror.applySnapshot([:], now: t0)
        let other = "/org/bluez/hci0/dev_01"
        _ = mirror.receive(.interfacesAdded(path: device, interfaces: [BlueZInterface.device: [:]]), now: t0)
        _ = mirror.receive(
            .interfacesAdded(path: other, interfaces: [BlueZInterface.device: [:]]), now: t0 + .milliseconds(500))
        _ = mirror.receive(rssi(device, -40), now: t0 + .milliseconds(900))
        #expect(mirror.recency.oldest?.key == device)
        _ = mirror.receive(rssi(device, -41), now: t0 + .milliseconds(1000))
        #expect(mirror.recency.oldest?.key == other)
        #expect(mirror.prune(now: t0 + .seconds(2)) == [.removed(path: other, interface: BlueZInterface.device)])
    }

    @Test func aShortStaleAgeOrdersMoreFinely() {
        let mirror = ObjectTreeMirror(limits: .init(staleDeviceAge: .seconds(5)))
        #expect(mirror.recencyResolution == .milliseconds(50))
    }

    @Test("a device that connects leaves the recency list and comes back, stamped, when it disconnects")
    func aLinkChangeMovesTheDeviceAtOnce() {
        var mirror = ObjectTreeMirror(limits: .init(staleDeviceAge: .seconds(600)))
        _ = mirror.applySnapshot([:], now: t0)
        _ = mirror.receive(.interfacesAdded(path: device, interfaces: [BlueZInterface.device: [:]]), now: t0)
        let link = { (up: Bool) in
            ObjectTreeDelta.propertiesChanged(
                path: self.device, interface: BlueZInterface.device, changed: ["Connected": .bool(up)], invalidated: [])
        }
        _ = mirror.receive(link(true), now: t0 + .milliseconds(100))
        #expect(mirror.prunableDeviceCount == 0)
        #expect(mirror.index.devices[device]?.recencyStamp == nil)
        _ = mirror.receive(link(false), now: t0 + .milliseconds(200))
        #expect(mirror.recency.lastTouched(device) == t0 + .milliseconds(200))
        #expect(mirror.index.devices[device]?.recencyStamp == t0 + .milliseconds(200))
    }

    @Test("the advertisement's version counts changes of what is advertised, not of the RSSI or a repeat")
    func advertisementVersionCountsRealChanges() {
        var entry = DeviceEntry(
            adapter: "/org/bluez/hci0",
            properties: DeviceProperties([
                "Address": .string("AA:BB:CC:DD:EE:FF"), "Name": .string("Tag"),
                "ManufacturerData": .dictionary([.uint(0x004C): .bytes([1, 2])]),
            ]))
        let data = { (bytes: [UInt8]) in PropertyValue.dictionary([.uint(0x004C): .bytes(bytes)]) }
        _ = entry.apply(["RSSI": .int(-40), "ManufacturerData": data([1, 2])], [])
        #expect(entry.advertisementVersion == 0)
        #expect(entry.apply(["ManufacturerData": data([1, 3])], []) == ["ManufacturerData"])
        #expect(entry.advertisementVersion == 1)
        // The alias does not name a device that has a name: compared before and after.
        _ = entry.apply(["Alias": .string("Other")], [])
        #expect(entry.advertisementVersion == 1)
        _ = entry.apply(["Name": .string("Tag 2")], [])
        #expect(entry.advertisementVersion == 2)
        // Absent and empty read alike: no change of the advertisement.
        _ = entry.apply(["UUIDs": .array([])], [])
        #expect(entry.advertisementVersion == 2)
        #expect(entry.properties.advertisement == AdvertisementData(device1: entry.properties.propertyMap))
    }

    @Test("the advertisement the properties hold follows every change, and an invalidated property leaves it")
    func heldAdvertisementFollowsTheProperties() {
        var properties = DeviceProperties(["Address": .string("AA:BB:CC:DD:EE:FF")])
        #expect(properties.advertisement == AdvertisementData())
        let steps: [(PropertyMap, [String])] = [
            (["Alias": .string("AA-BB-CC-DD-EE-FF")], []),
            (["Alias": .string("Kitchen")], []),
            (["Name": .string("Tag"), "TxPower": .int(-8), "AdvertisingFlags": .bytes([0x06])], []),
            (["ServiceData": .dictionary([.string("0000fcd2-0000-1000-8000-00805f9b34fb"): .bytes([0x40])])], []),
            (["UUIDs": .array([.string("0000180F-0000-1000-8000-00805F9B34FB")])], []),
            (["RSSI": .int(-50)], ["Name"]),
            ([:], ["Alias", "ServiceData", "UUIDs"]),
            (["Address": .string("11:22:33:44:55:66"), "Alias": .string("11-22-33-44-55-66")], []),
        ]
        for (changed, invalidated) in steps {
            _ = properties.apply(changed, invalidated)
            #expect(properties.advertisement == AdvertisementData(device1: properties.propertyMap))
        }
        #expect(properties.advertisement.localName == nil)
        #expect(properties.advertisement.txPower == -8)
    }
}
