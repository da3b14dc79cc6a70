import GATT
import Testing

@Suite struct BluetoothUUIDTests {
    @Test func everyWrittenFormOfHeartRateIsTheSameValueAndHash() throws {
        let forms = [
            "180D", "180d", "0x180D", "0X180d", "0000180D", "0x0000180d",
            "0000180d-0000-1000-8000-00805f9b34fb", "0000180D-0000-1000-8000-00805F9B34FB",
        ]
        for form in forms {
            #expect(try BluetoothUUID(parsing: form) == .heartRate, "\(form)")
        }
        let set = Set(try forms.map { try BluetoothUUID(parsing: $0) } + [BluetoothUUID(uuid32: 0x180D)])
        #expect(set.count == 1)
        #expect(BluetoothUUID.heartRate == BluetoothUUID(uuid16: 0x180D))
    }

    @Test func textFormsOfA16BitUUID() {
        #expect(BluetoothUUID.heartRate.uuidString == "0000180d-0000-1000-8000-00805f9b34fb")
        #expect(BluetoothUUID.heartRate.shortString == "180d")
        #expect(BluetoothUUID.heartRate.description == "Heart Rate (180d)")
        #expect(BluetoothUUID(uuid16: 0x1234).description == "1234")
        #expect(BluetoothUUID.heartRate.shortestWidth == .bits16)
        #expect(BluetoothUUID.heartRate.uuid16 == 0x180D)
        #expect(BluetoothUUID.heartRate.uuid32 == 0x0000_180D)
    }

    @Test func a32BitUUIDIsDistinctFromItsLow16Bits() throws {
        let uuid = try BluetoothUUID(parsing: "12345678")
        #expect(uuid == BluetoothUUID(uuid32: 0x1234_5678))
        #expect(uuid != BluetoothUUID(uuid16: 0x5678))
        #expect(uuid.uuid16 == nil)
        #expect(uuid.shortestWidth == .bits32)
        #expect(uuid.uuidString == "12345678-0000-1000-8000-00805f9b34fb")
        #expect(uuid.shortString == "12345678")
        #expect(uuid.littleEndianBytes == [0x78, 0x56, 0x34, 0x12])
    }

    @Test func customUUIDsAreShownInFullLowercase() throws {
        let nus = try BluetoothUUID(parsing: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
        #expect(nus.uuidString == "6e400001-b5a3-f393-e0a9-e50e24dcca9e")
        #expect(nus.description == "6e400001-b5a3-f393-e0a9-e50e24dcca9e")
        #expect(nus.uuid32 == nil && nus.uuid16 == nil)
        #expect(nus.shortestWidth == .bits128)
        #expect(!nus.isInBluetoothBase)
        #expect(nus.high == 0x6E40_0001_B5A3_F393 && nus.low == 0xE0A9_E50E_24DC_CA9E)
    }

    @Test func theCanonicalParserTakesOnlyTheFormBlueZWrites() throws {
        let text = "e95d9250-251d-470a-a062-fa1922dfa9a8"
        let uuid = try #require(BluetoothUUID.canonical(text))
        #expect(uuid == BluetoothUUID(text) && uuid.uuidString == text)
        #expect(BluetoothUUID.canonical("0000180d-0000-1000-8000-00805f9b34fb") == .heartRate)
        for other in [
            "E95D9250-251D-470A-A062-FA1922DFA9A8", "180d", "0x180d", "e95d9250251d470aa062fa1922dfa9a8",
            "e95d9250-251d-470a-a062-fa1922dfa9a", "e95d9250-251d-470a-a062-fa1922dfa9a80",
            "e95d9250-251d-470a-a062+fa1922dfa9a8",
            "e95d9250-251d-470a-a062-fa1922dfa9ag", "",
        ] {
            #expect(BluetoothUUID.canonical(other) == nil, "\(other)")
        }
    }

    @Test func littleEndianBytesAsInADAndATT() throws {
        // 0x180D travels as 0D 18.
        #expect(BluetoothUUID.heartRate.littleEndianBytes == [0x0D, 0x18])
        #expect(BluetoothUUID.heartRate.littleEndianBytes(width: .bits32) == [0x0D, 0x18, 0x00, 0x00])
        // 6e400001-b5a3-f393-e0a9-e50e24dcca9e travels least significant byte first.
        let nusBytes: [UInt8] = [
            0x9E, 0xCA, 0xDC, 0x24, 0x0E, 0xE5, 0xA9, 0xE0, 0x93, 0xF3, 0xA3, 0xB5, 0x01, 0x00, 0x40, 0x6E,
        ]
        let nus = try BluetoothUUID(littleEndianBytes: nusBytes)
        #expect(nus.uuidString == "6e400001-b5a3-f393-e0a9-e50e24dcca9e")
        #expect(nus.littleEndianBytes == nusBytes)
        #expect(nus.bigEndianBytes == nusBytes.reversed())
        #expect(nus.littleEndianBytes(width: .bits16) == nil)
        #expect(try BluetoothUUID(bigEndianBytes: nus.bigEndianBytes) == nus)
    }

    @Test func theSameUUIDDecodesFromEveryWidth() throws {
        let wide = BluetoothUUID.batteryLevel.littleEndianBytes(width: .bits128) ?? []
        #expect(wide.count == 16)
        #expect(try BluetoothUUID(littleEndianBytes: wide) == .batteryLevel)
        #expect(try BluetoothUUID(littleEndianBytes: [0x19, 0x2A, 0x00, 0x00]) == .batteryLevel)
        #expect(try BluetoothUUID(littleEndianBytes: [0x19, 0x2A]) == .batteryLevel)
        // A 128-bit value in the base encodes in its shortest form.
        #expect(try BluetoothUUID(littleEndianBytes: wide).littleEndianBytes == [0x19, 0x2A])
    }

    @Test func bytesOfAWrongLengthAreRejected() {
        #expect(throws: BluetoothUUID.ByteLengthError(count: 3, allowed: [2, 4, 16])) {
            try BluetoothUUID(littleEndianBytes: [1, 2, 3])
        }
        #expect(throws: BluetoothUUID.ByteLengthError(count: 4, allowed: [16])) {
            try BluetoothUUID(bigEndianBytes: [1, 2, 3, 4])
        }
    }

    @Test(arguments: [
        ("", BluetoothUUID.ParseError.Reason.empty),
        ("180", .wrongDigitCount(3)),
        ("0x", .wrongDigitCount(0)),
        ("180DA", .wrongDigitCount(5)),
        ("180G", .invalidCharacter("G", offset: 3)),
        (" 180D", .invalidCharacter(" ", offset: 0)),
        ("18 0D", .invalidCharacter(" ", offset: 2)),
        ("0x18-D", .prefixOnFullUUID),
        ("0x0000180d-0000-1000-8000-00805f9b34fb", .prefixOnFullUUID),
        ("0000180d-0000-1000-8000-00805f9b34f", .wrongDigitCount(31)),
        ("0000180d00000-1000-8000-00805f9b34f-", .missingHyphen(offset: 8)),
        ("0000180d-0000-1000-8000-00805f9b3-fb", .misplacedHyphen(offset: 33)),
        ("0000180d-0000-1000-8000-00805f9b34fz", .invalidCharacter("z", offset: 35)),
        ("１８０Ｄ", .invalidCharacter("１", offset: 0)),
    ])
    func invalidStringsAreRejectedWithTheReason(input: String, reason: BluetoothUUID.ParseError.Reason) {
        #expect(throws: BluetoothUUID.ParseError(input: input, reason: reason)) {
            try BluetoothUUID(parsing: input)
        }
        #expect(BluetoothUUID(input) == nil)
    }

    @Test func parseErrorsQuoteTheInputAndTheAcceptedForms() {
        let error = BluetoothUUID.ParseError(input: "180G", reason: .invalidCharacter("G", offset: 3))
        #expect(error.description.contains("\"180G\""))
        #expect(error.description.contains("offset 3"))
        #expect(error.description.contains("8-4-4-4-12"))
    }

    @Test func everyAssignedConstantRoundTripsThroughItsTextForms() throws {
        let constants: [BluetoothUUID] = [
            .genericAccess, .genericAttribute, .deviceInformation, .heartRate, .battery, .bloodPressure,
            .environmentalSensing, .bthome, .deviceName, .appearance, .serviceChanged, .batteryLevel, .systemID,
            .modelNumberString, .serialNumberString, .firmwareRevisionString, .hardwareRevisionString,
            .softwareRevisionString, .manufacturerNameString, .bloodPressureMeasurement, .heartRateMeasurement,
            .bodySensorLocation, .heartRateControlPoint, .pressure, .temperature, .humidity,
            .characteristicExtendedProperties, .characteristicUserDescription, .clientCharacteristicConfiguration,
            .serverCharacteristicConfiguration, .characteristicPresentationFormat, .environmentalSensingMeasurement,
            .environmentalSensingTriggerSetting, .primaryServiceDeclaration, .characteristicDeclaration,
        ]
        #expect(Set(constants).count == constants.count)
        for uuid in constants {
            #expect(uuid.name != nil, "\(uuid.uuidString) has no name")
            #expect(try BluetoothUUID(parsing: uuid.shortString) == uuid)
            #expect(try BluetoothUUID(parsing: uuid.uuidString) == uuid)
        }
        #expect(BluetoothUUID.clientCharacteristicConfiguration.uuid16 == 0x2902)
        #expect(BluetoothUUID.clientCharacteristicConfiguration.name == "Client Characteristic Configuration")
        #expect(BluetoothUUID.bthome.littleEndianBytes == [0xD2, 0xFC])
    }

    @Test func uuidsSortBy128BitValue() {
        let sorted = [BluetoothUUID.batteryLevel, .heartRate, .genericAccess].sorted()
        #expect(sorted == [.genericAccess, .heartRate, .batteryLevel])
    }
}
