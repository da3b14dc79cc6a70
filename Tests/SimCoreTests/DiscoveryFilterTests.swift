import GATT
import SimCore
import Testing

@Suite("SetDiscoveryFilter parsing, as bluetoothd 5.66")
struct DiscoveryFilterTests {
    func parse(_ entries: [(key: String, value: FilterArgument)]) throws(BlueZError) -> DiscoveryFilter? {
        try DiscoveryFilter.parse(entries, adapterTransport: .dual)
    }

    @Test("an empty dictionary removes the filter")
    func emptyRemoves() throws {
        #expect(try parse([]) == nil)
    }

    @Test("every key is parsed; 16-bit UUIDs become 128-bit; DuplicateData defaults to false")
    func allKeys() throws {
        let filter = try #require(
            try parse([
                ("UUIDs", .strings(["180D", "0x180f", "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"])),
                ("RSSI", .int16(-70)), ("Transport", .string("le")), ("Discoverable", .bool(true)),
                ("Pattern", .string("C0:11")),
            ]))
        #expect(
            filter.uuids.map(\.uuidString) == [
                Fixture.hrs.uuidString, Fixture.battery.uuidString, "6e400001-b5a3-f393-e0a9-e50e24dcca9e",
            ])
        #expect(filter.rssi == -70)
        #expect(filter.transport == .le)
        #expect(filter.discoverable)
        #expect(filter.pattern == "C0:11")
        #expect(!filter.duplicateData)
        #expect(filter.pathloss == nil)
    }

    @Test("Transport auto keeps the adapter's transports")
    func autoTransport() throws {
        #expect(try parse([("Transport", .string("auto"))])?.transport == .dual)
        #expect(try parse([("Transport", .string("bredr"))])?.transport == .bredr)
    }

    @Test(
        "bad dictionaries are InvalidArguments",
        arguments: [
            [("Colour", FilterArgument.string("red"))],
            [("RSSI", .int16(-128))],
            [("RSSI", .int16(21))],
            [("RSSI", .uint16(5))],
            [("Pathloss", .uint16(138))],
            [("Transport", .string("usb"))],
            [("UUIDs", .strings(["not-a-uuid"]))],
            [("UUIDs", .other(signature: "ai"))],
            [("RSSI", .int16(-60)), ("Pathloss", .uint16(40))],
            [("DuplicateData", .string("yes"))],
        ] as [[(String, FilterArgument)]])
    func invalid(_ entries: [(String, FilterArgument)]) {
        #expect(throws: BluetoothdError.invalidArguments) {
            try parse(entries.map { (key: $0.0, value: $0.1) })
        }
    }

    @Test("GetDiscoveryFilters lists bluetoothd's keys in its order")
    func keys() {
        #expect(
            DiscoveryFilter.keys == [
                "UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern",
            ])
    }
}
