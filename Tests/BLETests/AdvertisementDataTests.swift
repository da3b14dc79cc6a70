import BLE
import GATT
import Testing

@Suite struct AdvertisementDataTests {
    @Test func extractsEveryFieldFromDevice1Properties() {
        let properties: PropertyMap = [
            "Address": .string("AA:BB:CC:DD:EE:FF"),
            "Name": .string("Sensor"),
            "UUIDs": .array([
                .string("0000180d-0000-1000-8000-00805f9b34fb"), .string("0000180f-0000-1000-8000-00805f9b34fb"),
            ]),
            "ManufacturerData": .dictionary([.uint(0x0059): .bytes([1, 2]), .uint(0x004C): .array([.uint(9)])]),
            "ServiceData": .dictionary([.string("0000fcd2-0000-1000-8000-00805f9b34fb"): .bytes([0x40, 0x01])]),
            "TxPower": .int(-8),
            "RSSI": .int(-60),
        ]
        let data = AdvertisementData(device1: properties)
        #expect(data.localName == "Sensor")
        #expect(data.serviceUUIDs == [.heartRate, .battery])
        #expect(Array(data.manufacturerData.keys) == [0x004C, 0x0059], "ordered by company id")
        #expect(data.manufacturerData[0x0059] == [1, 2])
        #expect(data.manufacturerData[0x004C] == [9])
        #expect(data.serviceData[.bthome] == [0x40, 0x01])
        #expect(data.txPower == -8)
        #expect(data.isConnectable == nil)
    }

    @Test func aliasIsTheNameUnlessBlueZMadeItUpFromTheAddress() {
        let madeUp = AdvertisementData(device1: [
            "Address": .string("AA:BB:CC:DD:EE:FF"), "Alias": .string("AA-BB-CC-DD-EE-FF"),
        ])
        #expect(madeUp.localName == nil)
        let real = AdvertisementData(device1: ["Address": .string("AA:BB:CC:DD:EE:FF"), "Alias": .string("Kitchen")])
        #expect(real.localName == "Kitchen")
    }

    @Test func malformedEntriesAreSkippedNotFatal() {
        let data = AdvertisementData(device1: [
            "UUIDs": .array([.string("not-a-uuid"), .string("180d")]),
            "ManufacturerData": .dictionary([.uint(70000): .bytes([1]), .uint(1): .string("x")]),
            "ServiceData": .dictionary([.string("zz"): .bytes([1])]),
        ])
        #expect(data.serviceUUIDs == [.heartRate])
        #expect(data.manufacturerData.isEmpty)
        #expect(data.serviceData.isEmpty)
    }

    @Test func advertisingFlagsTellConnectability() {
        let discoverable = AdvertisementData(device1: ["AdvertisingFlags": .bytes([0x06])])
        #expect(discoverable.isConnectable == true)
        let broadcaster = AdvertisementData(device1: ["AdvertisingFlags": .bytes([0x04])])
        #expect(broadcaster.isConnectable == false)
    }

    @Test("copies are values: setting a field of one leaves the other, and equality and hashing go by the fields")
    func copiesAreIndependentValues() {
        let original = AdvertisementData(
            localName: "Tag", serviceUUIDs: [.battery], manufacturerData: [0x004C: [1, 2]], txPower: -4)
        var copy = original
        copy.localName = "Other"
        copy.manufacturerData[0x004C] = [9]
        #expect(original.localName == "Tag")
        #expect(original.manufacturerData[0x004C] == [1, 2])
        #expect(copy.localName == "Other" && copy.manufacturerData[0x004C] == [9])
        #expect(copy.serviceUUIDs == [.battery] && copy.txPower == -4, "the fields not set are kept")

        var rebuilt = copy
        rebuilt.localName = "Tag"
        rebuilt.manufacturerData[0x004C] = [1, 2]
        #expect(rebuilt == original, "built separately, equal by the fields")
        #expect(rebuilt.hashValue == original.hashValue)
        #expect(Set([original, rebuilt, copy]).count == 2)
        #expect(AdvertisementData(localName: nil) == AdvertisementData())
        #expect(AdvertisementData(txPower: 0) != AdvertisementData())
    }
}
