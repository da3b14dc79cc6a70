import BTHomeCrypto
import SensorGateway
import Testing

import struct SimCore.SeededGenerator

/// BTHome v2 objects against the published examples (bthome.io's format
/// table, as Home Assistant's bthome-ble tests them): the service data,
/// the readings it must give.
@Suite struct BTHomeDecoderTests {
    struct Vector: Sendable, CustomStringConvertible {
        let data: String
        let readings: [Reading]
        var problems: [DecodeFailure] = []
        var description: String { data }
    }

    static func number(_ name: String, _ value: Double, _ unit: String? = nil) -> Reading {
        Reading(kind: .sensor, name: name, value: .number(value), unit: unit)
    }

    static func flag(_ name: String, _ value: Bool) -> Reading {
        Reading(kind: .binary, name: name, value: .flag(value))
    }

    static let vectors: [Vector] = [
        Vector(
            data: "40 02 ca 09 03 bf 13",
            readings: [number("temperature", 25.06, "°C"), number("humidity", 50.55, "%")]),
        Vector(
            data: "40 00 09 01 5d 02 5d 09 03 b7 18",
            readings: [number("battery", 93, "%"), number("temperature", 23.97, "°C"), number("humidity", 63.27, "%")]),
        Vector(data: "40 04 13 8a 01", readings: [number("pressure", 1008.83, "hPa")]),
        Vector(data: "40 05 13 8a 14", readings: [number("illuminance", 13460.67, "lx")]),
        Vector(data: "40 06 5e 1f", readings: [number("mass", 80.3, "kg")]),
        Vector(data: "40 07 3e 1d", readings: [number("mass", 74.86, "lb")]),
        Vector(data: "40 08 ca 06", readings: [number("dew_point", 17.38, "°C")]),
        Vector(data: "40 09 60", readings: [number("count", 96)]),
        Vector(data: "40 0a 13 8a 14", readings: [number("energy", 1346.067, "kWh")]),
        Vector(data: "40 0b 02 1b 00", readings: [number("power", 69.14, "W")]),
        Vector(data: "40 0c 02 0c", readings: [number("voltage", 3.074, "V")]),
        Vector(data: "40 0d 12 0c 0e 02 1c", readings: [number("pm25", 3090, "µg/m³"), number("pm10", 7170, "µg/m³")]),
        Vector(data: "40 0f 01", readings: [flag("generic", true)]),
        Vector(data: "40 10 01", readings: [flag("power", true)]),
        Vector(data: "40 11 00", readings: [flag("opening", false)]),
        Vector(data: "40 12 e2 04", readings: [number("carbon_dioxide", 1250, "ppm")]),
        Vector(data: "40 13 33 01", readings: [number("volatile_organic_compounds", 307, "µg/m³")]),
        Vector(data: "40 14 02 0c", readings: [number("moisture", 30.74, "%")]),
        Vector(data: "40 2d 01", readings: [flag("window", true)]),
        Vector(data: "40 3f 02 0c", readings: [number("rotation", 307.4, "°")]),
        Vector(data: "40 40 0c 00", readings: [number("distance", 12, "mm")]),
        Vector(data: "40 41 4e 00", readings: [number("distance", 7.8, "m")]),
        Vector(data: "40 42 4e 34 00", readings: [number("duration", 13.39, "s")]),
        Vector(data: "40 43 4e 34", readings: [number("current", 13.39, "A")]),
        Vector(data: "40 44 4e 34", readings: [number("speed", 133.9, "m/s")]),
        Vector(data: "40 45 11 01", readings: [number("temperature", 27.3, "°C")]),
        Vector(data: "40 46 32", readings: [number("uv_index", 5.0)]),
        Vector(data: "40 47 87 56", readings: [number("volume", 2215.1, "L")]),
        Vector(data: "40 48 dc 87", readings: [number("volume", 34780, "mL")]),
        Vector(data: "40 49 dc 87", readings: [number("volume_flow_rate", 34.78, "m³/h")]),
        Vector(data: "40 4a 02 0c", readings: [number("voltage", 307.4, "V")]),
        Vector(data: "40 4b 13 8a 14", readings: [number("gas", 1346.067, "m³")]),
        Vector(data: "40 4c 41 01 8a 01", readings: [number("gas", 25821.505, "m³")]),
        Vector(data: "40 4d 12 13 8a 14", readings: [number("energy", 344593.17, "kWh")]),
        Vector(data: "40 4e 87 56 2a 01", readings: [number("volume", 19551.879, "L")]),
        Vector(data: "40 4f 87 56 2a 01", readings: [number("water", 19551.879, "L")]),
        // 2023-05-14 19:41:17 UTC.
        Vector(data: "44 50 5d 39 61 64", readings: [number("timestamp", 1_684_093_277)]),
        Vector(data: "44 51 87 56", readings: [number("acceleration", 22.151, "m/s²")]),
        Vector(data: "44 52 87 56", readings: [number("gyroscope", 22.151, "°/s")]),
        Vector(
            data: "44 53 0c 48 65 6c 6c 6f 20 57 6f 72 6c 64 21",
            readings: [Reading(name: "text", value: .text("Hello World!"))]),
        Vector(
            data: "44 54 0c 48 65 6c 6c 6f 20 57 6f 72 6c 64 21",
            readings: [Reading(name: "raw", value: .text("48656c6c6f20576f726c6421"))]),
        Vector(data: "40 55 87 56 2a 01", readings: [number("volume_storage", 19551.879, "L")]),
        Vector(data: "40 56 e8 03", readings: [number("conductivity", 1000, "µS/cm")]),
        Vector(data: "40 57 ea", readings: [number("temperature", -22, "°C")]),
        Vector(data: "40 58 ea", readings: [number("temperature", -7.7, "°C")]),
        Vector(data: "40 59 ea", readings: [number("count", -22)]),
        Vector(data: "40 5a ea ea", readings: [number("count", -5398)]),
        Vector(data: "40 5b ea 02 34 ea", readings: [number("count", -365_690_134)]),
        Vector(data: "40 5c 02 fb ff ff", readings: [number("power", -12.78, "W")]),
        Vector(data: "40 5d 02 ea", readings: [number("current", -5.63, "A")]),
        Vector(
            data: "40 5e 3f 75 5f 11 d5",
            readings: [number("direction", 300.15, "°"), number("precipitation", 5454.5, "mm")]),
        Vector(data: "40 60 01", readings: [number("channel", 1)]),
        Vector(data: "40 61 ac 0d", readings: [number("rotational_speed", 3500, "rpm")]),
        Vector(data: "40 62 40 99 df ff", readings: [number("speed", -2.123456, "m/s")]),
        Vector(data: "40 63 00 57 d0 ff", readings: [number("acceleration", -3.123456, "m/s²")]),
        Vector(data: "40 64 02", readings: [number("light_level", 2)]),
        // Events.
        Vector(data: "40 3a 04", readings: [Reading(kind: .event, name: "button", value: .event(type: "long_press"))]),
        Vector(data: "40 3a 80", readings: [Reading(kind: .event, name: "button", value: .event(type: "hold_press"))]),
        Vector(
            data: "40 3a 00 3a 01 3a 03",
            readings: [
                Reading(kind: .event, name: "button_2", value: .event(type: "press")),
                Reading(kind: .event, name: "button_3", value: .event(type: "triple_press")),
            ]),
        Vector(
            data: "40 3c 01 03",
            readings: [Reading(kind: .event, name: "dimmer", value: .event(type: "rotate_left", steps: 3))]),
        // Several objects of one group are numbered.
        Vector(
            data: "40 02 ca 09 02 cf 09",
            readings: [number("temperature_1", 25.06, "°C"), number("temperature_2", 25.11, "°C")]),
        Vector(
            data: "40 00 01 0b 00 00 00 4a 0d 09 01 33 0c e9 0c",
            readings: [
                number("power", 0, "W"), number("voltage_1", 231.7, "V"), number("battery", 51, "%"),
                number("voltage_2", 3.305, "V"),
            ], problems: [.bthomeObjectOrder]),
        // The MAC address in the data (bit 1).
        Vector(data: "42 b2 18 8d 38 c1 a4 04 13 8a 01", readings: [number("pressure", 1008.83, "hPa")]),
    ]

    @Test(arguments: vectors) func decodesThePublishedExample(_ vector: Vector) throws {
        let packet = try BTHomeDecoder.decode(bytes(vector.data), address: bytes("00 00 00 00 00 00"), key: nil)
        #expect(packet.readings == vector.readings)
        #expect(packet.problems == vector.problems)
    }

    @Test func everyDefinedObjectIDIsRead() throws {
        // One object of each id with a value of the id's length (1 for length-prefixed ones): nothing stops the packet.
        for type in BTHomeObjectType.all {
            // A length byte of 1, then one byte; a command's opcode comes before its one argument.
            let value: [UInt8] =
                type.length.map { [UInt8](repeating: 0x01, count: $0) }
                ?? (type.format == .command ? [0x01, 0x01, 0x41] : [0x01, 0x41])
            let packet = try BTHomeDecoder.decode([0x40, type.id] + value, address: [0, 0, 0, 0, 0, 0], key: nil)
            #expect(packet.problems.isEmpty, "object \(type.id)")
            if type.kind != nil && type.format != .button && type.format != .dimmer {
                #expect(packet.readings.count == 1, "object \(type.id)")
            }
        }
        #expect(BTHomeObjectType.all.map(\.id) == BTHomeObjectType.all.map(\.id).sorted())
        #expect(BTHomeObjectType.all.count == 95)
    }

    @Test func thePacketIDFirmwareAndDeviceTypeAreNotReadings() throws {
        let packet = try BTHomeDecoder.decode(
            bytes("40 00 2a 01 64 f0 01 00 f2 00 01 06"), address: [0, 0, 0, 0, 0, 0], key: nil)
        #expect(packet.packetID == 42)
        #expect(packet.deviceTypeID == 1)
        #expect(packet.firmware == "6.1.0")
        #expect(packet.readings == [Self.number("battery", 100, "%")])
    }

    @Test func objectsOfOneNameInTwoUnitsGiveOneReadingTheLast() throws {
        // bthome-ble (Home Assistant) numbers objects apart by kind, name and unit, so one mass in kg
        // and one in lb share the key "mass": it keeps the last, in the first one's place.
        var packet = try BTHomeDecoder.decode(bytes("40 06 50 00 07 44 00"), address: [0, 0, 0, 0, 0, 0], key: nil)
        #expect(packet.readings == [Self.number("mass", 0.68, "lb")])
        packet = try BTHomeDecoder.decode(
            bytes("40 02 ca 09 06 50 00 07 44 00 06 05 00"), address: [0, 0, 0, 0, 0, 0], key: nil)
        #expect(
            packet.readings == [
                Self.number("temperature", 25.06, "°C"), Self.number("mass_1", 0.8, "kg"),
                Self.number("mass", 0.68, "lb"), Self.number("mass_2", 0.05, "kg"),
            ])
    }

    @Test func readsOutOfOrderObjectsAndReportsIt() throws {
        let packet = try BTHomeDecoder.decode(bytes("40 03 bf 13 02 ca 09"), address: [0, 0, 0, 0, 0, 0], key: nil)
        #expect(packet.readings == [Self.number("humidity", 50.55, "%"), Self.number("temperature", 25.06, "°C")])
        #expect(packet.problems == [.bthomeObjectOrder])
    }

    @Test func keepsWhatCameBeforeAnUnknownOrTruncatedObject() throws {
        var packet = try BTHomeDecoder.decode(
            bytes("40 01 5d fe 5d 09 03 b7 18"), address: [0, 0, 0, 0, 0, 0], key: nil)
        #expect(packet.readings == [Self.number("battery", 93, "%")])
        #expect(packet.problems == [.bthomeUnknownObject(0xFE)])
        packet = try BTHomeDecoder.decode(bytes("40 02 ca 09 03 bf"), address: [0, 0, 0, 0, 0, 0], key: nil)
        #expect(packet.readings == [Self.number("temperature", 25.06, "°C")])
        #expect(packet.problems == [.bthomeTruncatedObject(0x03)])
        packet = try BTHomeDecoder.decode(bytes("44 53 01 87"), address: [0, 0, 0, 0, 0, 0], key: nil)
        #expect(packet.readings.isEmpty)
        #expect(packet.problems == [.bthomeText])
    }

    @Test func refusesWhatIsNotBTHomeV2() {
        #expect(throws: DecodeFailure.bthomeEmpty) { try BTHomeDecoder.decode([], address: [], key: nil) }
        #expect(throws: DecodeFailure.bthomeVersion(0)) { try BTHomeDecoder.decode([0x00], address: [], key: nil) }
        #expect(throws: DecodeFailure.bthomeVersion(7)) {
            try BTHomeDecoder.decode(bytes("e1 02 00 0c 04 04 13 8a 01"), address: [], key: nil)
        }
        #expect(throws: DecodeFailure.bthomeTruncatedMAC) {
            try BTHomeDecoder.decode(bytes("42 b2 18"), address: [], key: nil)
        }
    }

    static let key = BTHomeBindKey(hex: "231d39c1d7cc1ab1aee224cd096db932")!
    static let mac = bytes("54 48 E6 8F 80 A5")

    @Test func decryptsThePublishedEncryptedExamples() throws {
        var packet = try BTHomeDecoder.decode(
            bytes("41 a4 72 66 c9 5f 73 00 11 22 33 78 23 72 14"), address: Self.mac, key: Self.key)
        #expect(packet.isEncrypted)
        #expect(packet.counter == 0x3322_1100)
        #expect(packet.readings == [Self.number("temperature", 25.06, "°C"), Self.number("humidity", 50.55, "%")])
        packet = try BTHomeDecoder.decode(bytes("41 87 b9 00 11 22 33 72 b0 23 1f"), address: Self.mac, key: Self.key)
        #expect(packet.readings == [Self.flag("motion", true)])
        packet = try BTHomeDecoder.decode(
            bytes("45 0a eb 84 46 7f 85 ba 01 00 00 31 88 78 8c"), address: bytes("B4 35 22 F5 3D A4"),
            key: BTHomeBindKey(hex: "90bffd73cb6b26ef58a7a8eba9232036"))
        #expect(packet.isTriggerBased)
        #expect(packet.counter == 0x0000_01BA)
    }

    @Test func encryptedDataNeedsTheRightKeyAndKeyedDevicesMustEncrypt() {
        let data = bytes("41 a4 72 66 c9 5f 73 00 11 22 33 78 23 72 14")
        #expect(throws: DecodeFailure.bthomeNoKey) { try BTHomeDecoder.decode(data, address: Self.mac, key: nil) }
        #expect(throws: DecodeFailure.bthomeDecryption("the MIC does not match (wrong bind key, or altered data)")) {
            try BTHomeDecoder.decode(
                data, address: Self.mac, key: BTHomeBindKey(hex: "814aac74c4f17b6c1581e1ab87816b99"))
        }
        #expect(throws: DecodeFailure.bthomeDowngrade) {
            try BTHomeDecoder.decode(bytes("40 04 13 8a 01"), address: Self.mac, key: Self.key)
        }
        #expect(BTHomeDecoder.encryptionCounter(data) == 0x3322_1100)
        #expect(BTHomeDecoder.encryptionCounter(bytes("40 04 13 8a 01 00 00 00 00")) == nil)
    }
}

/// Random bytes from the air: every decoder answers with readings or a failure with a reason, never a trap.
@Suite struct HostileAdvertisementTests {
    @Test func randomServiceAndManufacturerDataNeverTrap() {
        var random = SplitMix(seed: 99)
        let key = BTHomeBindKey(hex: "231d39c1d7cc1ab1aee224cd096db932")
        var failures: Set<String> = []
        var decoded = 0
        for round in 0..<20_000 {
            let count = Int.random(in: 0...40, using: &random)
            var data = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
            // Mostly BTHome v2 headers, so the object reader is exercised, not only the version check.
            if !data.isEmpty, round % 4 != 0 { data[0] = [0x40, 0x41, 0x42, 0x43, 0x44][round % 5] }
            let formats: [AdvertisementFormat] = [
                .bthome(data, aggregator: false), .eddystone(data), .ibeacon([0x02, 0x15] + data),
            ]
            for format in formats {
                do {
                    _ = try AdvertisementDecoder.decode(
                        format, address: [1, 2, 3, 4, 5, 6], key: round % 3 == 0 ? key : nil)
                    decoded += 1
                } catch {
                    failures.insert(error.reason)
                    #expect(!error.description.isEmpty)
                }
            }
        }
        #expect(decoded > 1000)
        #expect(
            failures.isSuperset(of: ["bthome.version", "bthome.decryption", "bthome.downgrade", "eddystone.frame"]))
    }
}
