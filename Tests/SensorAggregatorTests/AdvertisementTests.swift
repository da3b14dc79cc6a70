import GATT
import SensorAggregator
import Testing

@Suite struct AdvertisementTests {
    static let all = AdvertisedValues(temperature: 23.14, humidity: 46.65, pressure: 101_317, battery: 87)

    /// The BTHome objects an advertisement carries, decoded as a receiver would.
    static func bthome(_ plan: SensorAdvertisementPlan) throws -> [BTHomeObject] {
        let parsed = try AdvertisingData.parse(plan.bytes)
        guard let payload = parsed.serviceData[.bthome] else { return [] }
        return try BTHomeServiceData.decode(payload).objects
    }

    @Test func everythingFitsWithAShortName() throws {
        let plan = SensorAdvertisementBuilder.build(config: AdvertisingConfig(localName: "gw-1"), values: Self.all)
        // Flags 3 + ESS UUID 4 + BTHome 17 + name 6 = 30 bytes.
        #expect(
            plan.bytes == [
                0x02, 0x01, 0x06,  // flags: LE general discoverable, BR/EDR not supported
                0x03, 0x03, 0x1A, 0x18,  // complete 16-bit UUIDs: 0x181A
                0x10, 0x16, 0xD2, 0xFC,  // service data, UUID 0xFCD2
                0x40, 0x01, 0x57, 0x02, 0x0A, 0x09, 0x03, 0x39, 0x12, 0x04, 0xC5, 0x8B, 0x01,
                0x05, 0x09, 0x67, 0x77, 0x2D, 0x31,  // complete local name "gw-1"
            ])
        #expect(plan.dropped.isEmpty && !plan.nameShortened)
        #expect(try Self.bthome(plan).map(\.value) == [87, 23.14, 46.65, 1013.17])
        let parsed = try AdvertisingData.parse(plan.bytes)
        #expect(parsed.serviceUUIDs == [.environmentalSensing])
        #expect(parsed.localName == "gw-1")
    }

    @Test func theNameIsShortenedFirstDownToItsMinimum() throws {
        let plan = SensorAdvertisementBuilder.build(
            config: AdvertisingConfig(localName: "bleagent-sensor", minimumNameLength: 4), values: Self.all)
        #expect(plan.bytes.count == 31)
        #expect(plan.dropped.isEmpty)
        #expect(plan.nameShortened)
        let parsed = try AdvertisingData.parse(plan.bytes)
        #expect(parsed.localName == "bleag")
        #expect(!parsed.isCompleteName)
    }

    @Test func fieldsAreDroppedInTheDocumentedOrder() throws {
        // A name that must keep 10 characters forces drops: pressure (4 bytes)
        // is not enough, battery (2 more) is: 3 + 4 + 11 + (2 + 11) = 31.
        let config = AdvertisingConfig(localName: "greenhouse-north-7", minimumNameLength: 10)
        let plan = SensorAdvertisementBuilder.build(config: config, values: Self.all)
        #expect(plan.dropped == [.pressure, .battery])
        #expect(try Self.bthome(plan).map(\.id) == [0x02, 0x03])
        #expect(try AdvertisingData.parse(plan.bytes).localName == "greenhouse-")
        #expect(plan.bytes.count == 31)
        // Keeping 12 characters costs humidity as well.
        let stricter = AdvertisingConfig(localName: "greenhouse-north-7", minimumNameLength: 12)
        #expect(
            SensorAdvertisementBuilder.build(config: stricter, values: Self.all).dropped == [
                .pressure, .battery, .humidity,
            ])
        // A name that must stay whole at 22 characters leaves no room for BTHome.
        let long = AdvertisingConfig(localName: "greenhouse-north-bay-7", minimumNameLength: 22)
        let bare = SensorAdvertisementBuilder.build(config: long, values: Self.all)
        #expect(bare.dropped == [.pressure, .battery, .humidity, .temperature])
        #expect(try AdvertisingData.parse(bare.bytes).serviceData.isEmpty)
        #expect(try AdvertisingData.parse(bare.bytes).localName == "greenhouse-north-bay-7")
        #expect(bare.bytes.count == 31)
    }

    /// Whatever the name, minimum and values, the advertisement fits 31
    /// bytes, keeps flags and the ESS UUID, and drops only in priority order.
    @Test func alwaysWithinTheLegacyLimitAndPriorityHonoured() throws {
        let names = ["x", "gw", "bleagent-sensor", "température-capteur-ü", String(repeating: "n", count: 64)]
        let valueSets = [
            Self.all, AdvertisedValues(), AdvertisedValues(temperature: -40.5),
            AdvertisedValues(humidity: 100, pressure: 16_777_215), AdvertisedValues(temperature: 20, battery: 100),
        ]
        for name in names {
            for minimum in [1, 4, 8, 16, 22] {
                for values in valueSets {
                    for bthome in [true, false] {
                        let config = AdvertisingConfig(localName: name, bthome: bthome, minimumNameLength: minimum)
                        let plan = SensorAdvertisementBuilder.build(config: config, values: values)
                        #expect(plan.bytes.count <= 31)
                        let parsed = try AdvertisingData.parse(plan.bytes)
                        #expect(parsed.flags == .leGeneralDiscoverable)
                        #expect(parsed.serviceUUIDs == [.environmentalSensing])
                        #expect(!(parsed.localName ?? "").isEmpty)
                        // Drops are the first present fields in priority order.
                        let present = BTHomeField.allCases.filter { Self.value(of: $0, in: values) != nil }
                        #expect(Array(present.prefix(plan.dropped.count)) == plan.dropped)
                        if !bthome { #expect(parsed.serviceData.isEmpty) }
                    }
                }
            }
        }
    }

    static func value(of field: BTHomeField, in values: AdvertisedValues) -> Double? {
        switch field {
        case .temperature: values.temperature
        case .humidity: values.humidity
        case .pressure: values.pressure
        case .battery: values.battery
        }
    }

    @Test func aValueOutsideItsBTHomeFormatIsLeftOutNotCrashed() throws {
        let plan = SensorAdvertisementBuilder.build(
            config: AdvertisingConfig(localName: "gw"),
            values: AdvertisedValues(temperature: 21, pressure: 20_000_000, battery: 140))
        #expect(plan.unrepresentable == [.pressure, .battery])
        #expect(try Self.bthome(plan) == [.temperature(centidegrees: 2100)])
    }
}
