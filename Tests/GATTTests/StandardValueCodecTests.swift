import GATT
import Testing

/// Byte fixtures next to their meaning, for the SIG value formats the sensor
/// aggregator serves.
@Suite struct StandardValueCodecTests {
    @Test func temperatureFixturesDecodeAndEncode() throws {
        let fixtures: [([UInt8], Double?)] = [
            ([0x0A, 0x09], 23.14),  // 2314
            ([0xCE, 0xFF], -0.50),  // -50
            ([0x4D, 0x95], -273.15),  // -27315, the lowest allowed
            ([0xFF, 0x7F], 327.67),  // 32767, the highest
            ([0x00, 0x80], nil),  // 0x8000: not known
        ]
        for (bytes, celsius) in fixtures {
            let value = try TemperatureValue(bytes: bytes)
            #expect(value.celsius == celsius)
            #expect(value.bytes == bytes)
        }
        #expect(try TemperatureValue(celsius: 23.144).bytes == [0x0A, 0x09])
        #expect(try TemperatureValue(celsius: 23.14).description == "23.14 °C")
        #expect(TemperatureValue.unknown.bytes == [0x00, 0x80])
        #expect(TemperatureValue.unknown.description == "unknown")
    }

    @Test func temperatureRefusesWrongLengthsAndBelowAbsoluteZero() {
        #expect(throws: CharacteristicValueError.wrongLength(value: "Temperature (0x2A6E)", expected: 2, actual: 1)) {
            try TemperatureValue(bytes: [0x0A])
        }
        #expect(throws: CharacteristicValueError.self) { try TemperatureValue(bytes: [0x0A, 0x09, 0x00]) }
        #expect(throws: CharacteristicValueError.self) { try TemperatureValue(bytes: []) }
        // -27316 (0x954C) is below -273.15 °C.
        #expect(throws: CharacteristicValueError.self) { try TemperatureValue(bytes: [0x4C, 0x95]) }
        #expect(throws: CharacteristicValueError.self) { try TemperatureValue(celsius: -273.16) }
        #expect(throws: CharacteristicValueError.self) { try TemperatureValue(celsius: 327.68) }
        #expect(throws: CharacteristicValueError.self) { try TemperatureValue(celsius: .nan) }
    }

    @Test func humidityFixturesAndRange() throws {
        let fixtures: [([UInt8], Double?)] = [
            ([0x39, 0x12], 46.65),  // 4665
            ([0x00, 0x00], 0),
            ([0x10, 0x27], 100),  // 10000
            ([0xFF, 0xFF], nil),  // not known
        ]
        for (bytes, percent) in fixtures {
            let value = try HumidityValue(bytes: bytes)
            #expect(value.percent == percent)
            #expect(value.bytes == bytes)
        }
        // 10001 is over 100 %.
        #expect(throws: CharacteristicValueError.self) { try HumidityValue(bytes: [0x11, 0x27]) }
        #expect(throws: CharacteristicValueError.self) { try HumidityValue(bytes: [0x39]) }
        #expect(throws: CharacteristicValueError.self) { try HumidityValue(percent: -0.01) }
        #expect(try HumidityValue(percent: 46.65).raw == 4665)
    }

    @Test func pressureFixturesAndRange() throws {
        let value = try PressureValue(bytes: [0x08, 0x76, 0x0F, 0x00])
        #expect(value.raw == 1_013_256)
        #expect(value.pascals == 101_325.6)
        #expect(value.description == "101325.6 Pa")
        #expect(try PressureValue(pascals: 101_325.6).bytes == [0x08, 0x76, 0x0F, 0x00])
        #expect(throws: CharacteristicValueError.wrongLength(value: "Pressure (0x2A6D)", expected: 4, actual: 3)) {
            try PressureValue(bytes: [0x08, 0x76, 0x0F])
        }
        #expect(throws: CharacteristicValueError.self) { try PressureValue(pascals: -1) }
        #expect(throws: CharacteristicValueError.self) { try PressureValue(pascals: 500_000_000) }
    }

    @Test func batteryLevelFixturesAndRange() throws {
        #expect(try BatteryLevelValue(bytes: [0x57]).percent == 87)
        #expect(try BatteryLevelValue(percent: UInt8(100)).bytes == [0x64])
        #expect(
            throws: CharacteristicValueError.outOfRange(value: "Battery Level (0x2A19)", raw: "101", allowed: "0...100")
        ) {
            try BatteryLevelValue(bytes: [0x65])
        }
        #expect(throws: CharacteristicValueError.self) { try BatteryLevelValue(bytes: [0x57, 0x00]) }
        #expect(throws: CharacteristicValueError.self) { try BatteryLevelValue(percent: 100.6) }
    }

    @Test func esMeasurementDescriptorHasTheSpecsElevenByteLayout() throws {
        // flags 0000, arithmetic mean, period 300 s (0x00012C), interval 5 s,
        // air, uncertainty 4 (2 %).
        let bytes: [UInt8] = [0x00, 0x00, 0x02, 0x2C, 0x01, 0x00, 0x05, 0x00, 0x00, 0x01, 0x04]
        let descriptor = try EnvironmentalSensingMeasurement(bytes: bytes)
        #expect(descriptor.flags == 0)
        #expect(descriptor.samplingFunction == .arithmeticMean)
        #expect(descriptor.measurementPeriod == 300)
        #expect(descriptor.updateInterval == 5)
        #expect(descriptor.application == .air)
        #expect(descriptor.uncertainty == 4)
        #expect(descriptor.bytes == bytes)
        let built = try EnvironmentalSensingMeasurement(
            samplingFunction: .arithmeticMean, measurementPeriod: 300, updateInterval: 5, application: .air,
            uncertainty: 4)
        #expect(built == descriptor)
        // 24-bit fields take all three bytes; unknown codes round-trip.
        let wide: [UInt8] = [0x01, 0x80, 0x42, 0xFF, 0xFF, 0xFF, 0x56, 0x34, 0x12, 0x77, 0xFF]
        let decoded = try EnvironmentalSensingMeasurement(bytes: wide)
        #expect(decoded.measurementPeriod == 0xFF_FFFF)
        #expect(decoded.updateInterval == 0x12_3456)
        #expect(decoded.flags == 0x8001)
        #expect(decoded.bytes == wide)
    }

    @Test func esMeasurementRefusesWrongLengthAndOver24BitPeriods() throws {
        #expect(throws: CharacteristicValueError.self) {
            try EnvironmentalSensingMeasurement(bytes: [UInt8](repeating: 0, count: 10))
        }
        #expect(throws: CharacteristicValueError.self) {
            try EnvironmentalSensingMeasurement(bytes: [UInt8](repeating: 0, count: 12))
        }
        #expect(throws: CharacteristicValueError.self) {
            try EnvironmentalSensingMeasurement(
                samplingFunction: .instantaneous, measurementPeriod: 0x100_0000, updateInterval: 0,
                application: .air, uncertainty: 0)
        }
        var descriptor = try EnvironmentalSensingMeasurement(
            samplingFunction: .instantaneous, measurementPeriod: 0, updateInterval: 0, application: .air,
            uncertainty: 0)
        #expect(throws: CharacteristicValueError.self) { try descriptor.setUpdateInterval(0x100_0000) }
        try descriptor.setUpdateInterval(60)
        #expect(descriptor.bytes[6...8] == [0x3C, 0x00, 0x00])
    }
}
