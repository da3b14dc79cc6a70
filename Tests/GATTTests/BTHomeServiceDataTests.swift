import GATT
import Testing

@Suite struct BTHomeServiceDataTests {
    /// The fixture from the type's documentation, byte by byte.
    static let fixture: [UInt8] = [
        0x40,  // device info: version 2 (bits 5-7), not encrypted, regular
        0x01, 0x57,  // battery 87 %
        0x02, 0x0A, 0x09,  // temperature 2314 -> 23.14 °C
        0x03, 0x39, 0x12,  // humidity 4665 -> 46.65 %
        0x04, 0xC5, 0x8B, 0x01,  // pressure 101317 -> 1013.17 hPa
    ]

    @Test func encodesObjectsInAscendingIdOrderWhateverTheInputOrder() throws {
        let data = BTHomeServiceData(objects: [
            .pressure(pascals: 101_317), .humidity(hundredthsPercent: 4665), .temperature(centidegrees: 2314),
            .battery(87),
        ])
        #expect(try data.encode() == Self.fixture)
    }

    @Test func decodesTheFixtureToTheRightValues() throws {
        let decoded = try BTHomeServiceData.decode(Self.fixture)
        #expect(decoded.deviceInfo.version == 2)
        #expect(!decoded.deviceInfo.isEncrypted)
        #expect(!decoded.deviceInfo.isTriggerBased)
        #expect(decoded.objects.map(\.id) == [0x01, 0x02, 0x03, 0x04])
        #expect(decoded.objects.map(\.value) == [87, 23.14, 46.65, 1013.17])
    }

    @Test func deviceInfoBitsFollowTheSpec() {
        #expect(BTHomeDeviceInfo().rawValue == 0x40)
        #expect(BTHomeDeviceInfo(triggerBased: true).rawValue == 0x44)
        #expect(BTHomeDeviceInfo(rawValue: 0x41).isEncrypted)
        #expect(BTHomeDeviceInfo(rawValue: 0x42).hasMACAddress)
    }

    @Test func negativeTemperatureAndPhysicalUnitHelpers() throws {
        let objects = [
            BTHomeObject.temperature(celsius: -5.25), .humidity(percent: 100), .pressure(pascals: 99_999.6),
            .battery(percent: 3.4),
        ].compactMap { $0 }
        #expect(objects.count == 4)
        let bytes = try BTHomeServiceData(objects: objects).encode()
        #expect(bytes == [0x40, 0x01, 0x03, 0x02, 0xF3, 0xFD, 0x03, 0x10, 0x27, 0x04, 0xA0, 0x86, 0x01])
        #expect(BTHomeObject.pressure(pascals: 16_777_216) == nil)
        #expect(BTHomeObject.battery(percent: 101) == nil)
        #expect(throws: BTHomeError.valueOutOfRange(objectID: 0x04, value: "16777216 Pa")) {
            try BTHomeServiceData(objects: [.pressure(pascals: 16_777_216)]).encode()
        }
    }

    @Test func decodeRefusesMalformedData() {
        #expect(throws: BTHomeError.empty) { try BTHomeServiceData.decode([]) }
        #expect(throws: BTHomeError.unsupportedVersion(1)) { try BTHomeServiceData.decode([0x20, 0x01, 0x57]) }
        #expect(throws: BTHomeError.encryptionNotSupported) { try BTHomeServiceData.decode([0x41, 0x01, 0x57]) }
        #expect(throws: BTHomeError.truncated(objectID: 0x02, offset: 1)) {
            try BTHomeServiceData.decode([0x40, 0x02, 0x0A])
        }
        #expect(throws: BTHomeError.unknownObjectID(0x7F, offset: 3)) {
            try BTHomeServiceData.decode([0x40, 0x01, 0x57, 0x7F, 0x00])
        }
        #expect(throws: BTHomeError.objectsOutOfOrder(id: 0x01, after: 0x02, offset: 4)) {
            try BTHomeServiceData.decode([0x40, 0x02, 0x0A, 0x09, 0x01, 0x57])
        }
        #expect(throws: BTHomeError.encryptionNotSupported) {
            try BTHomeServiceData(deviceInfo: BTHomeDeviceInfo(rawValue: 0x41), objects: []).encode()
        }
    }

    @Test func skipsAnIncludedMACAddress() throws {
        let bytes: [UInt8] = [0x42, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x01, 0x64]
        #expect(try BTHomeServiceData.decode(bytes).objects == [.battery(100)])
        #expect(throws: BTHomeError.truncated(objectID: nil, offset: 1)) {
            try BTHomeServiceData.decode([0x42, 0x66, 0x55])
        }
    }
}
