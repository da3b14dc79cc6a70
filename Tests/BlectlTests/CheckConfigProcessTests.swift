import BLETesting
import Glibc
import JSON
import Testing

/// `--check-config` loads each configured plugin's validation without
/// starting it, and reports every field error of every plugin with its path.
@Suite("bleagent --check-config checks the plugins too", .serialized)
struct CheckConfigPluginTests {
    static func check(_ config: String) async throws -> (status: Int32, stdout: String, stderr: String, path: String) {
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }
        writeFile("\(directory)/roles.json", config)
        let result = try await Child(
            "\(buildDirectory)/bleagent", ["--check-config", "--config", "\(directory)/roles.json"]
        )
        .finish()
        #expect(!fileExists("\(directory)/run/control.sock"), "nothing started")
        return (result.status, result.stdout, result.stderr, "\(directory)/roles.json")
    }

    @Test("a plugin that does not exist is an error, not 'valid'")
    func unknownPlugin() async throws {
        let result = try await Self.check(
            RunningAgent.config(role: "central", plugins: ("NoSuchPlugin", "Diagnostics")))
        #expect(result.status == 78, "\(result)")
        #expect(result.stderr.contains("roles.central.plugin: "), "\(result.stderr)")
        #expect(result.stderr.contains("libNoSuchPlugin.so"), "\(result.stderr)")
    }

    @Test("every field error of both roles' plugins is listed with its full path")
    func everyFieldError() async throws {
        let config = """
            {
              "version": 1, "role": "central", "backend": "sim",
              "control": { "socket": "run/control.sock" }, "restore": { "stateDirectory": "state" },
              "pluginDirectory": "\(buildDirectory)",
              "roles": {
                "central": { "plugin": "PaymentTerminalScanner",
                             "config": { "margin": "six", "dwell": -1, "colour": "red", "journal": "../x" } },
                "peripheral": { "plugin": "SensorAggregator", "config": {
                  "sensors": [ { "id": "room", "kind": "temperature", "source": { "type": "simulated" } },
                               { "id": "room", "kind": "weather", "source": { "type": "ingest" } } ],
                  "windowSeconds": 0, "advertising": { } } }
              }
            }
            """
        let result = try await Self.check(config)
        #expect(result.status == 78, "\(result)")
        for path in [
            "roles.central.config.margin", "roles.central.config.dwell", "roles.central.config.colour",
            "roles.central.config.journal", "roles.peripheral.config.sensors[0].source.base",
            "roles.peripheral.config.sensors[1].id", "roles.peripheral.config.sensors[1].kind",
            "roles.peripheral.config.sensors[1].source", "roles.peripheral.config.windowSeconds",
            "roles.peripheral.config.advertising.localName",
        ] {
            #expect(result.stderr.contains("\(result.path): \(path): "), "\(path) missing from:\n\(result.stderr)")
        }
    }

    @Test("a valid config with built plugins is still valid, and says which plugins it checked")
    func valid() async throws {
        let result = try await Self.check(RunningAgent.config(role: "central", plugins: ("Diagnostics", "Diagnostics")))
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.hasPrefix("\(result.path): valid (role central, backend sim)"), "\(result.stdout)")
    }
}
