import GATT
import Testing

@Suite struct GATTAttributeModelTests {
    static let heartRateService = GATTService(
        uuid: .heartRate,
        characteristics: [
            GATTCharacteristic(
                uuid: .heartRateMeasurement, properties: .notify,
                descriptors: [
                    GATTDescriptor(uuid: .clientCharacteristicConfiguration, permissions: [.readable, .writeable])
                ]),
            GATTCharacteristic(uuid: .bodySensorLocation, properties: .read, value: [0x01]),
            GATTCharacteristic(uuid: .heartRateControlPoint, properties: .write),
        ])

    @Test func lookupsMatchUUIDsAsBlueZWritesThem() throws {
        // BlueZ reports every UUID in 128-bit form; the model compares canonically.
        let fromBlueZ = try BluetoothUUID(parsing: "00002a38-0000-1000-8000-00805f9b34fb")
        #expect(Self.heartRateService.characteristic(fromBlueZ)?.value == [0x01])
        let measurement = try #require(Self.heartRateService.characteristic(.heartRateMeasurement))
        #expect(measurement.descriptor(BluetoothUUID(uuid16: 0x2902)) != nil)
        #expect(measurement.canSubscribe)
        #expect(Self.heartRateService.characteristic(.batteryLevel) == nil)
    }

    @Test func permissionsDefaultToWhatThePropertiesImply() {
        #expect(GATTCharacteristic(uuid: .batteryLevel, properties: [.read, .notify]).permissions == .readable)
        #expect(GATTCharacteristic(uuid: .heartRateControlPoint, properties: .write).permissions == .writeable)
        #expect(
            GATTCharacteristic(uuid: .deviceName, properties: .read, extendedProperties: .reliableWrite).permissions
                == [.readable, .writeable])
        #expect(GATTCharacteristic(uuid: .deviceName, properties: .broadcast).permissions == [])
        #expect(GATTDescriptor(uuid: .characteristicUserDescription).permissions == .readable)
    }

    @Test func servicesArePlainValues() {
        var copy = Self.heartRateService
        copy.characteristics[1].value = [0x02]
        #expect(copy != Self.heartRateService)
        #expect(Self.heartRateService.characteristics[1].value == [0x01])
        #expect(copy.isPrimary && copy.handle == nil && copy.includedServices.isEmpty)
    }
}
