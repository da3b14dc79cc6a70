import GATT
import Testing

@Suite("Advertisement monitor patterns")
struct AdvertisementPatternTests {
    @Test("patterns encode their UUID or company little-endian, with the prefix after it")
    func encodesServiceDataAndManufacturerPatterns() throws {
        let bthome = try AdvertisementPattern.serviceData16(0xFCD2)
        #expect(bthome.start == 0 && bthome.adType == 0x16 && bthome.content == [0xD2, 0xFC])
        let iBeacon = try AdvertisementPattern.manufacturerData(0x004C, prefix: [0x02, 0x15])
        #expect(iBeacon.adType == 0xFF && iBeacon.content == [0x4C, 0x00, 0x02, 0x15])
        #expect(iBeacon.description == "0/0xff/4c000215")
    }

    @Test("BlueZ 5.66's limits: AD type 0x01...0x3D or 0xFF, 1...31 bytes, start + length at most 31")
    func refusesWhatBluetoothdRefuses() throws {
        #expect(throws: AdvertisementPattern.Invalid.self) { try AdvertisementPattern(adType: 0x00, content: [1]) }
        #expect(throws: AdvertisementPattern.Invalid.self) { try AdvertisementPattern(adType: 0x3E, content: [1]) }
        #expect(throws: AdvertisementPattern.Invalid.self) { try AdvertisementPattern(adType: 0x16, content: []) }
        #expect(throws: AdvertisementPattern.Invalid.self) {
            try AdvertisementPattern(start: 1, adType: 0x16, content: [UInt8](repeating: 0, count: 31))
        }
        #expect(throws: AdvertisementPattern.Invalid.self) {
            try AdvertisementPattern(start: 31, adType: 0x16, content: [1])
        }
        let longest = try AdvertisementPattern(start: 30, adType: 0x3D, content: [1])
        #expect(longest.start == 30)
        _ = try AdvertisementPattern(adType: 0x01, content: [UInt8](repeating: 0, count: 31))
    }

    @Test("a pattern matches an AD structure of its type holding the content at its start; or_patterns: any")
    func matchesAsBluetoothdDoes() throws {
        let structures = [
            AdvertisingStructure(type: .flags, data: [0x06]),
            AdvertisingStructure(type: .serviceData16, data: [0xD2, 0xFC, 0x40, 0x02, 0xC4, 0x09]),
        ]
        #expect(try AdvertisementPattern.serviceData16(0xFCD2).matches(structures))
        #expect(try AdvertisementPattern.serviceData16(0xFCD2, prefix: [0x40]).matches(structures))
        #expect(try !AdvertisementPattern.serviceData16(0xFCD2, prefix: [0x41]).matches(structures))
        #expect(try AdvertisementPattern(start: 2, adType: 0x16, content: [0x40, 0x02]).matches(structures))
        #expect(
            try !AdvertisementPattern(start: 4, adType: 0x16, content: [0xC4, 0x09, 0x00]).matches(structures),
            "past the structure's end")
        #expect(try !AdvertisementPattern(adType: 0xFF, content: [0xD2, 0xFC]).matches(structures), "another type")
        let patterns = [
            try AdvertisementPattern.manufacturerData(0x004C), try AdvertisementPattern.serviceData16(0xFCD2),
        ]
        #expect(AdvertisementPattern.anyMatches(patterns, structures))
        #expect(!AdvertisementPattern.anyMatches([patterns[0]], structures))
    }
}
