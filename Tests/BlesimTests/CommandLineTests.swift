import BLETesting
import Foundation
import Testing

/// blesim's command line, by running the built binary.
@Suite("blesim's command line, as a process")
struct CommandLineTests {
    func run(_ arguments: [String]) async throws -> (status: Int32, output: String, errors: String) {
        try await TestProcess(BlesimProcess.executable, arguments).finish()
    }

    @Test("a usage error exits 64 and says what is wrong, then the usage")
    func usage() async throws {
        let result = try await run(["--adapters", "99"])
        #expect(result.status == 64)
        #expect(
            result.errors.hasPrefix("blesim: --adapters: expected a number from 1 to 16, got \"99\"\n\nusage: blesim"))
    }

    @Test("a bad scenario exits 65 and names the field")
    func badScenario() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("blesim-bad-\(getpid()).json").path
        try #"{"devices": [{"address": "C0:00:00:00:00:01", "rssi": {"distance": "far"}}]}"#.write(
            toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await run(["--scenario", path])
        #expect(result.status == 65)
        #expect(result.errors == "blesim: \(path): devices[0].rssi.distance: expected a number\n")
    }

    @Test("--help prints the usage and exits 0")
    func help() async throws {
        let result = try await run(["--help"])
        #expect(result.status == 0)
        #expect(result.output.hasPrefix("usage: blesim [--address BUS]"))
    }
}
