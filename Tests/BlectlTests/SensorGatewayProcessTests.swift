import BLETesting
import Glibc
import IO
import JSON
import Testing

/// The sensor gateway plugin (libSensorGateway.so from the build directory) in a real bleagent on the embedded
/// simulator serving Fixtures/sensor-gateway.json: BTHome sensors (plain, encrypted with the key in the key file,
/// encrypted with a key the gateway lacks), an iBeacon, Eddystone UID and TLM beacons, the aggregator's
/// advertisement and a phone nobody decodes, all through blectl.
@Suite("SensorGateway on the embedded simulator", .serialized, .timeLimit(.minutes(3)))
struct SensorGatewayProcessTests {
    static let key = "231d39c1d7cc1ab1aee224cd096db932"

    /// An agent directory whose gateway key file holds the key of 54:48:E6:8F:80:A5, with `mode`.
    static func directory(keyFileMode mode: mode_t) -> String {
        let directory = makeTemporaryDirectory()
        let state = "\(directory)/state/plugins/SensorGateway"
        for path in ["\(directory)/state", "\(directory)/state/plugins", state] { mkdir(path, 0o700) }
        writeFile("\(state)/bthome-keys", "# the Shelly H&T of the fixture\n54:48:E6:8F:80:A5 \(key)\n")
        chmod("\(state)/bthome-keys", mode)
        writeFile("\(directory)/roles.json", config)
        return directory
    }

    static let config = """
        {
          "version": 1, "role": "central", "backend": "sim",
          "control": { "socket": "run/control.sock" }, "restore": { "stateDirectory": "state" },
          "pluginDirectory": "\(buildDirectory)",
          "sim": { "scenario": "\(repositoryRoot)/Tests/BlectlTests/Fixtures/sensor-gateway.json" },
          "roles": { "central": { "plugin": "SensorGateway",
                                  "config": { "keyFile": "bthome-keys", "eventIntervalSeconds": 1 } } }
        }
        """

    static func reading(_ device: JSON?, _ name: String) -> JSON? {
        device?["readings"]?.arrayValue?.first { $0["name"]?.stringValue == name }?["value"]
    }

    @Test(
        "decodes plain and encrypted BTHome, iBeacon, Eddystone UID and TLM and the aggregator; gateway.devices, gateway.device and gateway.stats through blectl; reading events as readings change"
    )
    func decodesTheAir() async throws {
        let directory = Self.directory(keyFileMode: 0o600)
        defer { BlockingPool.shared.submit { removeTree(directory) } }
        let agent = try await RunningAgent(config: Self.config, directory: directory)
        let socket = ["--socket", agent.socketPath]
        let events = try await Child("\(buildDirectory)/blectl", socket + ["--json", "events", "--kind", "plugin"])
        #expect(await events.waitForStderr(containing: "streaming events"))
        // The moving sensor's reading events: three different temperatures (8 s period, one measurement a
        // second). Every device advertises once a second, and the gateway takes reports in order, so by the third
        // every device has been heard at least once (the static ones send one event, maybe before this subscription).
        var temperatures: Set<String> = []
        while temperatures.count < 3,
            let line = await events.waitForStdoutLine(where: { $0.contains(#""address":"A4:C1:38:00:00:02""#) })
        {
            let data = try JSON(parsing: line)["data"]?["data"]
            if let value = Self.reading(data, "temperature") { temperatures.insert(value.serialized()) }
        }
        #expect(temperatures.count == 3, "\(temperatures)")

        let listed = try JSON(parsing: try await blectl(socket + ["--json", "gateway", "devices"]).stdout)
        let devices = Dictionary(
            uniqueKeysWithValues: (listed["devices"]?.arrayValue ?? []).compactMap { device in
                device["address"]?.stringValue.map { ($0, device) }
            })
        #expect(listed["total"] == 8, "the phone is not decoded, the sensor without its key is listed: \(listed)")
        let plain = devices["A4:C1:38:00:00:01"]
        #expect(plain?["kind"] == "bthome" && plain?["name"] == "ATC_000001")
        #expect(Self.reading(plain, "temperature") == .double(21.5))
        #expect(Self.reading(plain, "humidity") == .double(45.25))
        #expect(Self.reading(plain, "battery") == .double(87))
        let encrypted = devices["54:48:E6:8F:80:A5"]
        #expect(encrypted?["encrypted"] == true)
        #expect(Self.reading(encrypted, "temperature") == .double(25.06))
        #expect(Self.reading(encrypted, "humidity") == .double(50.55))
        #expect(Self.reading(encrypted, "door") == true)
        #expect(Self.reading(devices["D0:00:00:00:00:01"], "major") == .double(1))
        #expect(devices["D0:00:00:00:00:01"]?["kind"] == "ibeacon")
        #expect(Self.reading(devices["D0:00:00:00:00:02"], "namespace") == "8b0ca750095477cb3e77")
        #expect(Self.reading(devices["D0:00:00:00:00:03"], "voltage") == .double(3))
        #expect(Self.reading(devices["D0:00:00:00:00:03"], "temperature") == .double(23.5))
        #expect(devices["C0:FF:EE:00:00:01"]?["kind"] == "aggregator")
        #expect(Self.reading(devices["C0:FF:EE:00:00:01"], "pressure") == .double(1013.17))

        let locked = try JSON(
            parsing: try await blectl(socket + ["--json", "gateway", "device", "54:48:e6:8f:80:b6"]).stdout)
        #expect(locked["readings"] == .array([]))
        #expect(locked["lastError"]?["reason"] == "bthome.no-key", "\(locked)")
        let stats = try JSON(parsing: try await blectl(socket + ["--json", "gateway", "stats"]).stdout)
        #expect((stats["decodeErrors"]?["bthome.no-key"]?.intValue ?? 0) > 0, "\(stats)")
        #expect((stats["duplicatesDropped"]?.intValue ?? 0) > 0, "a sensor repeats each measurement: \(stats)")
        #expect((stats["unknownFormat"]?.intValue ?? 0) > 0, "the phone")
        #expect(stats["bindKeys"] == 1 && stats["devices"] == 8)

        let table = try await blectl(socket + ["gateway", "devices", "--kind", "bthome", "--sort", "rssi"])
        #expect(table.stdout.hasPrefix("ADDRESS"), "\(table.stdout)")
        #expect(table.stdout.contains("54:48:E6:8F:80:A5  bthome*"), "\(table.stdout)")
        #expect(table.stdout.contains("battery=87% humidity=45.25% temperature=21.5°C"), "\(table.stdout)")
        #expect(table.stdout.contains("4 of 4 devices (1-4)"), "\(table.stdout)")
        let detail = try await blectl(socket + ["gateway", "device", "A4:C1:38:00:00:01"])
        #expect(detail.stdout.contains("READING"), "\(detail.stdout)")
        let counters = try await blectl(socket + ["gateway", "stats"])
        #expect(counters.stdout.contains("bthome.no-key"), "\(counters.stdout)")
        let missing = try await blectl(socket + ["gateway", "device", "00:11:22:33:44:55"])
        #expect(missing.status == 1 && missing.stderr.contains("(1101)"), "\(missing.stderr)")
        let bad = try await blectl(socket + ["call", "gateway.devices", #"{"limit":0}"#])
        #expect(bad.stderr.contains("limit: expected an integer from 1 to 1000"), "\(bad.stderr)")
        // The agent checks each method's declared params before the handler runs: every problem, with its path.
        // (The methods only read; a refused call reaches no handler.)
        for (method, params, paths) in [
            ("gateway.devices", #"{"limit":"5","kind":"lamp","colour":1}"#, ["limit", "kind", "colour"]),
            ("gateway.device", #"{"address":5,"verbose":true}"#, ["address", "verbose"]),
            ("gateway.device", "{}", ["address"]),
            ("gateway.stats", #"{"all":true}"#, ["all"]),
        ] {
            let refused = try await blectl(socket + ["--json", "call", method, params])
            let error = try JSON(parsing: refused.stdout)
            #expect(refused.status == 1 && error["code"] == -32602, "\(method) \(params): \(refused)")
            let found = (error["data"]?["errors"]?.arrayValue ?? []).compactMap { $0["path"]?.stringValue }
            #expect(Set(found) == Set(paths), "\(method) \(params): \(error)")
        }

        events.signal(SIGKILL)
        _ = await events.finish()
        let stopped = await agent.stop()
        #expect(stopped.status == 0)
        #expect(stopped.stderr.contains("1 bind keys from"), "\(stopped.stderr)")
        #expect(!stopped.stderr.contains(Self.key), "the bind key never reaches the log")
    }

    @Test("--check-config reports every field error of the gateway's config with its path, and starts nothing")
    func checksItsConfig() async throws {
        let config = """
            {
              "version": 1, "role": "central", "backend": "sim",
              "control": { "socket": "run/control.sock" }, "restore": { "stateDirectory": "state" },
              "pluginDirectory": "\(buildDirectory)",
              "roles": { "central": { "plugin": "SensorGateway", "config": {
                "maxDevices": 0, "keyFile": "../keys", "colour": "red", "rssiSmoothing": "high",
                "allow": { "addresses": ["nope"], "companyIds": [70000] }, "deny": { "serviceUuids": "FCD2" } } } }
            }
            """
        let result = try await CheckConfigPluginTests.check(config)
        #expect(result.status == 78, "\(result)")
        for path in [
            "maxDevices", "keyFile", "colour", "rssiSmoothing", "allow.addresses[0]", "allow.companyIds[0]",
            "deny.serviceUuids",
        ] {
            #expect(
                result.stderr.contains("\(result.path): roles.central.config.\(path): "),
                "\(path) missing from:\n\(result.stderr)")
        }
        let valid = try await CheckConfigPluginTests.check(Self.config)
        #expect(valid.status == 0, "\(valid)")
    }

    @Test("a key file others can read is refused with the reason, and the key never shows")
    func refusesAReadableKeyFile() async throws {
        let directory = Self.directory(keyFileMode: 0o644)
        defer { BlockingPool.shared.submit { removeTree(directory) } }
        let agent = try await RunningAgent(config: Self.config, directory: directory)
        let socket = ["--socket", agent.socketPath]
        #expect(await agent.child.waitForStderr(containing: "failed to start"))
        let status = try JSON(parsing: try await blectl(socket + ["--json", "status"]).stdout)
        let reason = status["roleState"]?["reason"]?.stringValue ?? ""
        #expect(status["roleState"]?["state"] == "failed", "\(status)")
        #expect(
            reason.contains("config.keyFile: ")
                && reason.contains("bthome-keys group or others may access it (mode 644)"),
            "\(reason)")
        let stopped = await agent.stop()
        #expect(!stopped.stderr.contains(Self.key))
    }
}
