import SimCore

#if canImport(Glibc)
    import Glibc
#endif

/// `blesim`: serves org.bluez over a simulated air. Exit status: 0 after SIGINT/SIGTERM,
/// 64 for a usage error, 65 for a bad scenario, 69 when the bus cannot be used.
@main
struct BlesimMain {
    static func main() async {
        let options: SimOptions
        do {
            options = try SimOptions.parse(Array(CommandLine.arguments.dropFirst()))
        } catch {
            fail("blesim: \(error)\n\n\(SimOptions.usage)", status: 64)
        }
        if options.help {
            print(SimOptions.usage, terminator: "")
            return
        }
        guard let path = options.scenarioPath ?? ScenarioFile.defaultPath() else {
            fail("blesim: no scenario: \(ScenarioFile.defaultRelativePath) not found; pass --scenario FILE", status: 65)
        }
        let scenario: Scenario
        do {
            scenario = options.applied(to: try ScenarioFile.load(path))
        } catch {
            fail("blesim: \(error)", status: 65)
        }
        do {
            try await BlueZServer.serve(
                scenario: scenario, address: options.address, experimental: options.experimental,
                extendedAdvertising: options.extendedAdvertising)
        } catch {
            fail("blesim: \(error)", status: 69)
        }
    }

    static func fail(_ message: String, status: Int32) -> Never {
        let bytes = Array((message + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        exit(status)
    }
}
