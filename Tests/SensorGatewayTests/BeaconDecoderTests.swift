import SensorGateway
import Testing

/// iBeacon and Eddystone frames from their specifications.
@Suite struct BeaconDecoderTests {
    @Test func iBeacon() throws {
        // Apple's AirLocate sample UUID, major 1, minor 2, measured power -59 dBm.
        let data = bytes("02 15 e2 c5 6d b5 df fb 48 d2 b0 60 d0 f5 a7 10 96 e0 00 01 00 02 c5")
        #expect(IBeaconDecoder.matches(data))
        #expect(
            try IBeaconDecoder.decode(data) == [
                Reading(name: "uuid", value: .text("e2c56db5-dffb-48d2-b060-d0f5a71096e0")),
                Reading(name: "major", value: .number(1)), Reading(name: "minor", value: .number(2)),
                Reading(name: "measured_power", value: .number(-59), unit: "dBm"),
            ])
        #expect(throws: DecodeFailure.ibeaconLength(22)) { try IBeaconDecoder.decode(Array(data.dropLast())) }
        #expect(!IBeaconDecoder.matches(bytes("12 19 00")))
    }

    @Test func eddystoneUID() throws {
        // The specification's elided-UUID namespace example, instance 000000000001, with and without RFU bytes.
        let frame = bytes("00 ee 8b 0c a7 50 09 54 77 cb 3e 77 00 00 00 00 00 01")
        let readings = [
            Reading(name: "tx_power", value: .number(-18), unit: "dBm"),
            Reading(name: "namespace", value: .text("8b0ca750095477cb3e77")),
            Reading(name: "instance", value: .text("000000000001")),
        ]
        #expect(try EddystoneDecoder.decode(frame) == readings)
        #expect(try EddystoneDecoder.decode(frame + [0, 0]) == readings)
        #expect(throws: DecodeFailure.eddystoneLength(0x00, 19)) { try EddystoneDecoder.decode(frame + [0]) }
    }

    @Test func eddystoneURL() throws {
        // https://goo.gl/S6zT6P (the specification's example), tx power +18 dBm.
        #expect(
            try EddystoneDecoder.decode(bytes("10 12 03 67 6f 6f 2e 67 6c 2f 53 36 7a 54 36 50")) == [
                Reading(name: "tx_power", value: .number(18), unit: "dBm"),
                Reading(name: "url", value: .text("https://goo.gl/S6zT6P")),
            ])
        // Expansion codes: http://www.example.com/ .
        #expect(
            try EddystoneDecoder.decode(bytes("10 00 00 65 78 61 6d 70 6c 65 00"))[1]
                == Reading(name: "url", value: .text("http://www.example.com/")))
        #expect(throws: DecodeFailure.eddystoneURL) { try EddystoneDecoder.decode(bytes("10 00 04 41")) }
        #expect(throws: DecodeFailure.eddystoneURL) { try EddystoneDecoder.decode(bytes("10 00 02 20")) }
    }

    @Test func eddystoneTLM() throws {
        // 3.0 V, 23.5 °C, 1,000 PDUs, 360.0 s since boot.
        #expect(
            try EddystoneDecoder.decode(bytes("20 00 0b b8 17 80 00 00 03 e8 00 00 0e 10")) == [
                Reading(name: "voltage", value: .number(3.0), unit: "V"),
                Reading(name: "temperature", value: .number(23.5), unit: "°C"),
                Reading(name: "advertisements", value: .number(1000)),
                Reading(name: "uptime", value: .number(360), unit: "s"),
            ])
        // Voltage 0 and temperature 0x8000: not supported, left out.
        #expect(
            try EddystoneDecoder.decode(bytes("20 00 00 00 80 00 00 00 00 01 00 00 00 01")).map(\.name) == [
                "advertisements", "uptime",
            ])
        #expect(throws: DecodeFailure.eddystoneTLMVersion(1)) {
            try EddystoneDecoder.decode(bytes("20 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"))
        }
        #expect(throws: DecodeFailure.eddystoneFrame(0x40)) { try EddystoneDecoder.decode(bytes("40 00")) }
    }
}
