import JSON
import RoleKit
import SensorAggregator
import Testing

@Suite struct ConfigTests {
    @Test func theSampleConfigReadsWithDefaultsFilledIn() throws {
        let config = try sampleConfig()
        #expect(config.sensors.map(\.id) == ["room", "hum", "baro", "co2"])
        #expect(config.sensors[0].unit == "degC")
        #expect(
            config.sensors[0].source
                == .file(FileSource(path: "/sys/class/hwmon/hwmon0/temp1_input", scale: 0.001, pollSeconds: 5)))
        #expect(config.sensors[0].thresholds == Thresholds(low: 5, high: 35))
        #expect(config.sensors[1].source.pollSeconds == 2)
        #expect(config.sensors[2].source == .ingest)
        #expect(config.sensors[3].unit == "ppm")
        #expect(config.windowSeconds == 300)
        #expect(config.maxSamplesPerWindow == 4096)
        #expect(config.notification == NotificationConfig(intervalSeconds: 10, queueLimit: 2))
        #expect(
            config.advertising == AdvertisingConfig(localName: "bleagent-sensor", bthome: true, minimumNameLength: 4))
        #expect(config.deviceInformation.model == "gateway-1")
        #expect(config.primarySensor(of: .pressure)?.id == "baro")
    }

    /// Each broken config names the field that is wrong.
    @Test func errorsNameTheFieldPath() throws {
        let minimal: JSON = [
            "sensors": [["id": "t", "kind": "temperature", "source": ["type": "simulated", "base": 20]]],
            "advertising": ["localName": "n"],
        ]
        #expect(throws: Never.self) { try SensorAggregatorConfig(json: minimal) }
        /// Every problem of `minimal` with `key` set to `value` (nil removes it).
        func failures(_ key: String, _ value: JSON?) -> [String] {
            var object = minimal.objectValue ?? JSONObject()
            object[key] = value
            do {
                _ = try SensorAggregatorConfig(json: .object(object))
                return ["accepted"]
            } catch {
                return error.errors.map(\.description)
            }
        }
        func failures(sensor: JSON) -> [String] { failures("sensors", [sensor]) }
        #expect(failures("sensors", []) == ["sensors: expected 1 to 32 elements, found 0"])
        #expect(failures("colour", "blue") == ["colour: unknown field"])
        #expect(
            failures("windowSeconds", 0) == ["windowSeconds: expected an integer from 1 to 604800, found the integer 0"]
        )
        #expect(failures("advertising", nil) == ["advertising: missing required field"])
        #expect(failures("advertising", [:]) == ["advertising.localName: missing required field"])
        let ingest: JSON = ["type": "ingest"]
        let simulated: JSON = ["type": "simulated", "base": 1]
        #expect(
            failures(sensor: ["id": "bad id", "kind": "temperature", "source": simulated])
                == [#"sensors[0].id: expected 1-32 characters from A-Z a-z 0-9 . _ -, found the string "bad id""#])
        #expect(
            failures(sensor: ["id": "t", "kind": "smell", "source": simulated]) == [
                #"sensors[0].kind: expected one of "temperature", "humidity", "pressure", "battery", "generic", found the string "smell""#
            ])
        #expect(
            failures(sensor: ["id": "t", "kind": "temperature", "unit": "degF", "source": simulated])
                == ["sensors[0].unit: a temperature sensor's values are in degC (use scale)"])
        #expect(
            failures(sensor: ["id": "t", "kind": "generic", "source": simulated])
                == ["sensors[0].unit: is required for a generic sensor"])
        #expect(
            failures(sensor: ["id": "t", "kind": "temperature", "source": ingest])
                == ["sensors[0].source: an ingest source needs the ingest section"])
        #expect(
            failures(sensor: ["id": "t", "kind": "temperature", "source": ["type": "file", "path": "relative"]])
                == [
                    #"sensors[0].source.path: expected an absolute path of at most 4096 bytes, found the string "relative""#
                ])
        #expect(
            failures(sensor: ["id": "t", "kind": "temperature", "source": ["type": "file", "path": "/x", "scale": 0]])
                == ["sensors[0].source.scale: must not be 0"])
        #expect(
            failures(sensor: [
                "id": "t", "kind": "temperature", "source": ["type": "simulated", "base": 1, "waveform": "wobble"],
            ]) == [
                #"sensors[0].source.waveform: expected one of "sine", "square", "sawtooth", "constant", found the string "wobble""#
            ])
        #expect(
            failures(sensor: [
                "id": "t", "kind": "temperature", "source": simulated, "thresholds": ["low": 30, "high": 10],
            ]) == ["sensors[0].thresholds: low must not be above high"])
        #expect(
            failures(
                "sensors",
                [
                    ["id": "t", "kind": "temperature", "source": simulated],
                    ["id": "t", "kind": "humidity", "source": simulated],
                ]) == [#"sensors[1].id: "t" is used by an earlier sensor"#])
        #expect(
            failures("ingest", ["socketPath": "relative.sock"])
                == [
                    #"ingest.socketPath: expected an absolute path of at most 107 bytes, found the string "relative.sock""#
                ])
    }

    @Test func everyProblemIsReportedNotJustTheFirst() throws {
        let error = #expect(throws: JSONFieldErrors.self) {
            try SensorAggregatorConfig(json: [
                "sensors": [
                    ["id": "room", "kind": "temperature", "source": ["type": "simulated"]],
                    ["id": "room", "kind": "weather", "source": ["type": "ingest"]],
                ],
                "windowSeconds": 0, "advertising": [:], "colour": 1,
            ])
        }
        #expect(
            error?.errors.map(\.path) == [
                "colour", "sensors[0].source.base", "sensors[1].id", "sensors[1].kind", "sensors[1].source",
                "windowSeconds", "advertising.localName",
            ])
    }
}
