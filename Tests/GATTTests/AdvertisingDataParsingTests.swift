import GATT
import Testing

@Suite struct AdvertisingDataParsingTests {
    /// A heart-rate strap's advertisement, as a scanner receives it.
    static let heartRateStrap: [UInt8] = [
        0x02, 0x01, 0x06,  // Flags: LE General Discoverable, BR/EDR not supported
        0x05, 0x03, 0x0D, 0x18, 0x0F, 0x18,  // Complete 16-bit UUIDs: 180D Heart Rate, 180F Battery
        0x08, 0x09, 0x48, 0x52, 0x4D, 0x2D, 0x50, 0x72, 0x6F,  // Complete Local Name "HRM-Pro"
        0x07, 0xFF, 0x59, 0x00, 0x01, 0x02, 0x03, 0x04,  // Manufacturer 0x0059 (Nordic): 01 02 03 04
    ]

    @Test func aRealWorldAdvertisementParsesIntoTypedFields() throws {
        let data = try AdvertisingData.parse(Self.heartRateStrap)
        #expect(data.flags == [.generalDiscoverable, .brEdrNotSupported])
        #expect(data.serviceUUIDs == [.heartRate, .battery])
        #expect(data.serviceUUIDsAreComplete)
        #expect(data.localName == "HRM-Pro")
        #expect(data.isCompleteName)
        #expect(data.manufacturerData == [0x0059: [0x01, 0x02, 0x03, 0x04]])
        #expect(data.txPower == nil && data.appearance == nil && data.serviceData.isEmpty && data.others.isEmpty)
    }

    @Test func everyModelledTypeParses() throws {
        let bytes: [UInt8] = [
            0x05, 0x02, 0x0D, 0x18, 0x0F, 0x18,  // Incomplete 16-bit UUIDs: 180D, 180F
            0x05, 0x05, 0x78, 0x56, 0x34, 0x12,  // Complete 32-bit UUIDs: 12345678
            0x11, 0x07,  // Complete 128-bit UUIDs: 6e400001-b5a3-f393-e0a9-e50e24dcca9e
            0x9E, 0xCA, 0xDC, 0x24, 0x0E, 0xE5, 0xA9, 0xE0, 0x93, 0xF3, 0xA3, 0xB5, 0x01, 0x00, 0x40, 0x6E,
            0x04, 0x08, 0x48, 0x52, 0x4D,  // Shortened Local Name "HRM"
            0x02, 0x0A, 0xF4,  // Tx Power -12 dBm
            0x03, 0x19, 0x41, 0x03,  // Appearance 0x0341 (Heart Rate Belt)
            0x06, 0x16, 0xD2, 0xFC, 0x40, 0x01, 0x64,  // Service Data FCD2 (BTHome): 40 01 64
            0x07, 0x20, 0x78, 0x56, 0x34, 0x12, 0xAA, 0xBB,  // Service Data 12345678: AA BB
            0x12, 0x21,  // Service Data 6e400001-...: 01
            0x9E, 0xCA, 0xDC, 0x24, 0x0E, 0xE5, 0xA9, 0xE0, 0x93, 0xF3, 0xA3, 0xB5, 0x01, 0x00, 0x40, 0x6E, 0x01,
        ]
        let data = try AdvertisingData.parse(bytes)
        let nus = try BluetoothUUID(parsing: "6e400001-b5a3-f393-e0a9-e50e24dcca9e")
        let custom32 = BluetoothUUID(uuid32: 0x1234_5678)
        #expect(data.serviceUUIDs == [.heartRate, .battery, custom32, nus])
        #expect(!data.serviceUUIDsAreComplete)
        #expect(data.localName == "HRM" && !data.isCompleteName)
        #expect(data.txPower == -12)
        #expect(data.appearance == 0x0341)
        #expect(data.serviceData == [.bthome: [0x40, 0x01, 0x64], custom32: [0xAA, 0xBB], nus: [0x01]])
    }

    @Test func unknownTypesArePreservedRawInOrder() throws {
        let bytes: [UInt8] = [
            0x04, 0x2A, 0x01, 0x02, 0x03,  // Mesh Message: 01 02 03
            0x02, 0x01, 0x06,  // Flags
            0x03, 0x14, 0x0D, 0x18,  // 16-bit Service Solicitation: 180D
            0x01, 0x3F,  // an unassigned type with no data
        ]
        let data = try AdvertisingData.parse(bytes)
        #expect(
            data.others == [
                AdvertisingStructure(type: AdvertisingDataType(0x2A), data: [0x01, 0x02, 0x03]),
                AdvertisingStructure(type: .serviceSolicitationUUIDs16, data: [0x0D, 0x18]),
                AdvertisingStructure(type: AdvertisingDataType(0x3F), data: []),
            ])
        #expect(data.flags == .leGeneralDiscoverable)
    }

    @Test func aZeroLengthOctetEndsTheDataAndTheRestIsPadding() throws {
        let bytes: [UInt8] = [
            0x02, 0x01, 0x06,  // Flags
            0x00,  // terminator
            0xFF, 0x09, 0x41,  // padding, even if it looks like a broken structure
        ]
        #expect(try AdvertisingData.parse(bytes) == AdvertisingData(flags: .leGeneralDiscoverable))
        #expect(try AdvertisingData.parse([]).isEmpty)
        #expect(try AdvertisingData.parse([0x00, 0x00, 0x00]).isEmpty)
    }

    @Test(arguments: [
        // A length running past the end: offset of the length octet, declared, available.
        (
            [0x02, 0x01] as [UInt8],
            AdvertisingDataError.structureOverrunsEnd(offset: 0, declaredLength: 2, available: 1)
        ),
        ([0x05], .structureOverrunsEnd(offset: 0, declaredLength: 5, available: 0)),
        (
            [0x02, 0x01, 0x06, 0x05, 0x03, 0x0D, 0x18, 0x0F],  // Flags, then a UUID list cut short
            .structureOverrunsEnd(offset: 3, declaredLength: 5, available: 4)
        ),
    ])
    func truncatedInputIsAnErrorWithItsOffset(bytes: [UInt8], error: AdvertisingDataError) {
        #expect(throws: error) { try AdvertisingData.parse(bytes) }
        #expect(throws: error) { try AdvertisingStructure.parseAll(bytes) }
    }

    @Test(arguments: [
        (
            [0x03, 0x01, 0x06, 0x00] as [UInt8], AdvertisingDataType.flags, 0, 2,
            AdvertisingDataError.LengthRequirement.exactly(1)
        ),
        ([0x01, 0x01], .flags, 0, 0, .exactly(1)),
        ([0x02, 0x01, 0x06, 0x04, 0x03, 0x0D, 0x18, 0x0F], .completeServiceUUIDs16, 3, 3, .multipleOf(2)),
        ([0x04, 0x04, 0x01, 0x02, 0x03], .incompleteServiceUUIDs32, 0, 3, .multipleOf(4)),
        ([0x03, 0x06, 0x01, 0x02], .incompleteServiceUUIDs128, 0, 2, .multipleOf(16)),
        ([0x03, 0x0A, 0xF4, 0x00], .txPowerLevel, 0, 2, .exactly(1)),
        ([0x02, 0x19, 0x41], .appearance, 0, 1, .exactly(2)),
        ([0x02, 0x16, 0xD2], .serviceData16, 0, 1, .atLeast(2)),
        ([0x04, 0x20, 0x01, 0x02, 0x03], .serviceData32, 0, 3, .atLeast(4)),
        ([0x03, 0x21, 0x01, 0x02], .serviceData128, 0, 2, .atLeast(16)),
        ([0x02, 0xFF, 0x59], .manufacturerSpecificData, 0, 1, .atLeast(2)),
    ])
    func wrongSizesForFixedFieldsAreErrorsWithTheirOffset(
        bytes: [UInt8], type: AdvertisingDataType, offset: Int, length: Int,
        expected: AdvertisingDataError.LengthRequirement
    ) {
        #expect(
            throws: AdvertisingDataError.invalidLength(type: type, offset: offset, length: length, expected: expected)
        ) {
            try AdvertisingData.parse(bytes)
        }
    }

    @Test func errorsSayWhereAndWhat() {
        let overrun = AdvertisingDataError.structureOverrunsEnd(offset: 3, declaredLength: 5, available: 4)
        #expect(overrun.description == "AD structure at offset 3 declares 5 bytes but only 4 follow")
        let length = AdvertisingDataError.invalidLength(
            type: .completeServiceUUIDs16, offset: 3, length: 3, expected: .multipleOf(2))
        #expect(
            length.description
                == "Complete List of 16-bit Service UUIDs (0x03) at offset 3 has 3 data bytes; it needs a multiple of 2 bytes"
        )
    }

    @Test func emptyUUIDListsAndManufacturerDataWithoutPayloadAreValid() throws {
        let data = try AdvertisingData.parse([
            0x01, 0x03,  // Complete 16-bit UUIDs: none ("no services")
            0x03, 0xFF, 0x4C, 0x00,  // Manufacturer 0x004C, empty payload
        ])
        #expect(data.serviceUUIDs.isEmpty)
        #expect(data.manufacturerData == [0x004C: []])
    }

    @Test func laterSingleValuedFieldsReplaceEarlierOnes() throws {
        let data = try AdvertisingData.parse([
            0x02, 0x0A, 0x00,  // Tx Power 0
            0x04, 0xFF, 0x59, 0x00, 0x01,  // Manufacturer 0x0059: 01
            0x04, 0xFF, 0x4C, 0x00, 0x02,  // Manufacturer 0x004C: 02
            0x04, 0xFF, 0x59, 0x00, 0x03,  // Manufacturer 0x0059: 03 (replaces 01)
            0x02, 0x0A, 0x04,  // Tx Power 4
        ])
        #expect(data.txPower == 4)
        #expect(data.manufacturerData == [0x0059: [0x03], 0x004C: [0x02]])
    }

    @Test func namesAreReadAsBluetoothdReadsThem() throws {
        // Trailing NULs some vendors send are dropped, and the UTF-8 before them kept: "Café".
        #expect(try AdvertisingData.parse([0x08, 0x09, 0x43, 0x61, 0x66, 0xC3, 0xA9, 0x00, 0x00]).localName == "Café")
        // UTF-8 stays UTF-8: "Café".
        #expect(try AdvertisingData.parse([0x06, 0x09, 0x43, 0x61, 0x66, 0xC3, 0xA9]).localName == "Café")
        // Invalid UTF-8: non-ASCII bytes become spaces, then whitespace is trimmed.
        #expect(try AdvertisingData.parse([0x06, 0x09, 0xFF, 0x41, 0xFE, 0x42, 0xC3]).localName == "A B")
        // An embedded NUL ends the name.
        #expect(try AdvertisingData.parse([0x05, 0x09, 0x41, 0x00, 0x42, 0x43]).localName == "A")
    }
}
