import GATT
import Testing

@Suite struct AdvertisingDataEncodingTests {
    @Test func aRealWorldAdvertisementEncodesToTheExpectedBytes() throws {
        let data = AdvertisingData(
            flags: .leGeneralDiscoverable, serviceUUIDs: [.heartRate, .battery], localName: "HRM-Pro",
            manufacturerData: [0x0059: [0x01, 0x02, 0x03, 0x04]])
        // BlueZ's order: Flags, UUID lists, manufacturer data, service data, name.
        let expected: [UInt8] = [
            0x02, 0x01, 0x06,  // Flags
            0x05, 0x03, 0x0D, 0x18, 0x0F, 0x18,  // Complete 16-bit UUIDs: 180D, 180F
            0x07, 0xFF, 0x59, 0x00, 0x01, 0x02, 0x03, 0x04,  // Manufacturer 0x0059
            0x08, 0x09, 0x48, 0x52, 0x4D, 0x2D, 0x50, 0x72, 0x6F,  // Complete Local Name "HRM-Pro"
        ]
        #expect(try data.encode() == expected)
        #expect(try AdvertisingData.parse(expected) == data)
    }

    @Test func uuidsAreGroupedByShortestWidthAndServiceDataUsesTheMatchingType() throws {
        let nus = try BluetoothUUID(parsing: "6e400001-b5a3-f393-e0a9-e50e24dcca9e")
        let data = AdvertisingData(
            serviceUUIDs: [nus, BluetoothUUID(uuid32: 0x1234_5678), .heartRate], serviceUUIDsAreComplete: false,
            serviceData: [.bthome: [0x40, 0x02, 0xC4, 0x09]])
        let bytes = try data.encode(limit: .extended)  // 36 bytes
        #expect(
            bytes == [
                0x03, 0x02, 0x0D, 0x18,  // Incomplete 16-bit UUIDs: 180D
                0x05, 0x04, 0x78, 0x56, 0x34, 0x12,  // Incomplete 32-bit UUIDs: 12345678
                0x11, 0x06,  // Incomplete 128-bit UUIDs: 6e400001-...
                0x9E, 0xCA, 0xDC, 0x24, 0x0E, 0xE5, 0xA9, 0xE0, 0x93, 0xF3, 0xA3, 0xB5, 0x01, 0x00, 0x40, 0x6E,
                0x07, 0x16, 0xD2, 0xFC, 0x40, 0x02, 0xC4, 0x09,  // Service Data FCD2 (BTHome): temperature 25.00
            ])
    }

    @Test func everyFieldSurvivesAnEncodeParseRoundTrip() throws {
        let nus = try BluetoothUUID(parsing: "6e400001-b5a3-f393-e0a9-e50e24dcca9e")
        let data = AdvertisingData(
            flags: [.limitedDiscoverable, .brEdrNotSupported], serviceUUIDs: [.heartRate, nus],
            localName: "Ω-sensor", isCompleteName: false, txPower: -20, appearance: 0x0341,
            serviceData: [.bthome: [0x40], BluetoothUUID(uuid32: 0xAABB_CCDD): [], nus: [0x01, 0x02]],
            manufacturerData: [0xFFFF: [0xDE, 0xAD], 0x004C: [0x02, 0x15]],
            others: [AdvertisingStructure(type: .uri, data: [0x17, 0x2F, 0x2F])])
        let bytes = try data.encode(limit: .extended)
        #expect(try AdvertisingData.parse(bytes) == data)
    }

    @Test func exactly31BytesFitTheLegacyLimitAnd32DoNot() throws {
        // Flags (3) + manufacturer data with 24 payload bytes (2 + 2 + 24 = 28) = 31.
        var data = AdvertisingData(
            flags: .leGeneralDiscoverable, manufacturerData: [0x0059: Array(repeating: 0xAB, count: 24)])
        #expect(try data.encode().count == 31)
        data.manufacturerData[0x0059] = Array(repeating: 0xAB, count: 25)
        let error = AdvertisingDataError.tooLong(
            length: 32, limit: .legacy,
            fields: [
                .init(type: .flags, size: 3), .init(type: .manufacturerSpecificData, size: 29),
            ])
        #expect(throws: error) { try data.encode() }
        #expect(
            error.description
                == "advertising data needs 32 bytes, over the 31-byte legacy limit "
                + "(Flags (0x01) 3, Manufacturer Specific Data (0xFF) 29)")
        #expect(try data.encode(limit: .extended).count == 32)
    }

    @Test func theExtendedLimitIs251Bytes() throws {
        // One manufacturer structure: 2 + 2 + payload.
        let fits = AdvertisingData(manufacturerData: [0x0059: Array(repeating: 0, count: 247)])
        #expect(try fits.encode(limit: .extended).count == 251)
        let over = AdvertisingData(manufacturerData: [0x0059: Array(repeating: 0, count: 248)])
        #expect(
            throws: AdvertisingDataError.tooLong(
                length: 252, limit: .extended, fields: [.init(type: .manufacturerSpecificData, size: 252)])
        ) {
            try over.encode(limit: .extended)
        }
    }

    @Test func aLongNameIsShortenedToFitWhenAsked() throws {
        // Flags (3) + 16-bit UUID (4) leave 24 bytes: 2 for the header, 22 for the name.
        let data = AdvertisingData(
            flags: .leGeneralDiscoverable, serviceUUIDs: [.heartRate],
            localName: "Living Room Thermometer Pro")  // 27 bytes
        #expect(throws: AdvertisingDataError.self) { try data.encode() }
        let bytes = try data.encode(shortenNameToFit: true)
        #expect(bytes.count == 31)
        let parsed = try AdvertisingData.parse(bytes)
        #expect(parsed.localName == "Living Room Thermomete")
        #expect(parsed.isCompleteName == false)
        #expect(bytes[7...8] == [0x17, 0x08])  // length 23, Shortened Local Name
    }

    @Test func shorteningCutsAtACharacterBoundary() throws {
        // 29 bytes of room minus the header leaves 27 for the name; "é" takes 2 bytes.
        let data = AdvertisingData(localName: String(repeating: "é", count: 20))  // 40 bytes
        let parsed = try AdvertisingData.parse(try data.encode(shortenNameToFit: true))
        #expect(parsed.localName == String(repeating: "é", count: 14))  // 28 bytes would not fit
    }

    @Test func aNameThatCannotFitAtAllIsStillAnError() {
        let data = AdvertisingData(localName: "Sensor", manufacturerData: [0x0059: Array(repeating: 0, count: 26)])
        #expect(throws: AdvertisingDataError.self) { try data.encode(shortenNameToFit: true) }
    }

    @Test func aTypedTypeInOthersIsRejectedRatherThanEncodedTwice() {
        let data = AdvertisingData(
            localName: "A", others: [AdvertisingStructure(type: .completeLocalName, data: [0x42])])
        #expect(throws: AdvertisingDataError.modelledTypeInOthers(.completeLocalName)) { try data.encode() }
    }

    @Test func rawStructuresEncodeAndRejectOversizedData() throws {
        let structures = [
            AdvertisingStructure(type: .flags, data: [0x06]),
            AdvertisingStructure(type: AdvertisingDataType(0x3F), data: []),
        ]
        let bytes = try AdvertisingStructure.encodeAll(structures)
        #expect(bytes == [0x02, 0x01, 0x06, 0x01, 0x3F])
        #expect(try AdvertisingStructure.parseAll(bytes) == structures)
        let huge = AdvertisingStructure(type: .uri, data: Array(repeating: 0, count: 255))
        #expect(throws: AdvertisingDataError.structureTooLong(type: .uri, dataLength: 255)) {
            try AdvertisingStructure.encodeAll([huge])
        }
    }

    @Test func orderedMapsKeepFirstPositionAndLastValue() {
        var map: OrderedMap<UInt16, [UInt8]> = [0x0059: [1], 0x004C: [2]]
        map[0x0059] = [3]
        map[0x0006] = [4]
        #expect(map.keys == [0x0059, 0x004C, 0x0006])
        #expect(map.values == [[3], [2], [4]])
        map[0x004C] = nil
        #expect(map.keys == [0x0059, 0x0006])
        #expect(map != [0x0006: [4], 0x0059: [3]])  // order matters
        #expect(map == [0x0059: [3], 0x0006: [4]])
    }

    @Test func largeOrderedMapsFindRemoveAndKeepOrderPastTheirIndexThreshold() {
        var map = OrderedMap((0..<40).map { (UInt16($0) * 3, [UInt8($0)]) })
        #expect(map.count == 40 && map[39 * 3] == [39] && map[1] == nil)
        map[30] = nil
        map[30] = [99]
        map[0] = [100]
        let kept: [UInt16] = (0..<40).filter { $0 != 10 }.map { UInt16($0) * 3 }
        #expect(map.keys == kept + [30])
        #expect(map[30] == [99] && map[0] == [100] && map[33] == [11])
        for key in map.keys where key != 0 { map[key] = nil }
        #expect(map == [0: [100]])
    }
}
