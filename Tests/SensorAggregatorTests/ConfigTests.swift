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
        /// The error text for `minimal` with `key` set to `value` (nil removes it).
        func failure(_ key: String, _ value: JSON?) -> String {
            var object = minimal.objectValue ?? JSONObject()
            object[key] = value
            do {
                _ = try SensorAggregatorConfig(json: .object(object))
                return "accepted"
            } catch {
                return error.description
            }
        }
        func failure(sensor: JSON) -> String { failure("sensors", [sensor]) }
        #expect(failure("sensors", []) == "config.sensors: expected a non-empty array")
        #expect(failure("colour", "blue") == "config.colour: unknown field")
        #expect(failure("windowSeconds", 0) == "config.windowSeconds: expected an integer from 1 to 604800")
        #expect(failure("advertising", nil) == "config.advertising: is required (at least localName)")
        #expect(
            failure(sensor: ["id": "bad id", "kind": "temperature", "source": ["type": "ingest"]])
                == "config.sensors[0].id: expected 1-32 characters from A-Z a-z 0-9 . _ -")
        #expect(
            failure(sensor: ["id": "t", "kind": "smell", "source": ["type": "ingest"]])
                == "config.sensors[0].kind: expected one of temperature, humidity, pressure, battery, generic")
        #expect(
            failure(sensor: ["id": "t", "kind": "temperature", "unit": "degF", "source": ["type": "ingest"]])
                == "config.sensors[0].unit: a temperature sensor's values are in degC (use scale)")
        #expect(
            failure(sensor: ["id": "t", "kind": "generic", "source": ["type": "ingest"]])
                == "config.sensors[0].unit: is required for a generic sensor")
        #expect(
            failure(sensor: ["id": "t", "kind": "temperature", "source": ["type": "ingest"]])
                == "config.sensors[0].source: an ingest source needs the ingest section")
        #expect(
            failure(sensor: ["id": "t", "kind": "temperature", "source": ["type": "file", "path": "relative"]])
                == "config.sensors[0].source.path: expected an absolute path")
        #expect(
            failure(sensor: ["id": "t", "kind": "temperature", "source": ["type": "file", "path": "/x", "scale": 0]])
                == "config.sensors[0].source.scale: must not be 0")
        #expect(
            failure(sensor: [
                "id": "t", "kind": "temperature", "source": ["type": "simulated", "base": 1, "waveform": "wobble"],
            ]) == "config.sensors[0].source.waveform: expected one of sine, square, sawtooth, constant")
        #expect(
            failure(sensor: [
                "id": "t", "kind": "temperature", "source": ["type": "simulated", "base": 1],
                "thresholds": ["low": 30, "high": 10],
            ]) == "config.sensors[0].thresholds: low must not be above high")
        #expect(
            failure(
                "sensors",
                [
                    ["id": "t", "kind": "temperature", "source": ["type": "simulated", "base": 1]],
                    ["id": "t", "kind": "humidity", "source": ["type": "simulated", "base": 1]],
                ]) == "config.sensors[1].id: \"t\" is used by an earlier sensor")
        #expect(
            failure("ingest", ["socketPath": "relative.sock"])
                == "config.ingest.socketPath: expected an absolute path of at most 107 bytes")
    }
}
