import GATT
import SimCore
import Testing

@Suite("blesim's command line")
struct SimOptionsTests {
    @Test("every option, in both spellings")
    func all() throws {
        let options = try SimOptions.parse([
            "--address", "unix:path=/tmp/bus", "--adapters=2", "--scenario", "a.json", "--seed", "9",
        ])
        #expect(options.address == "unix:path=/tmp/bus")
        #expect(options.adapters == 2)
        #expect(options.scenarioPath == "a.json")
        #expect(options.seed == 9)
    }

    @Test(
        "bad command lines are usage errors that say what is wrong",
        arguments: [
            (["--adapters", "0"], #"--adapters: expected a number from 1 to 16, got "0""#),
            (["--adapters"], "--adapters needs a value"),
            (["--seed", "-1"], #"--seed: expected a non-negative integer, got "-1""#),
            (["--colour"], #"unknown argument "--colour""#),
        ])
    func usage(arguments: [String], message: String) {
        #expect(throws: SimOptions.UsageError(message: message)) { try SimOptions.parse(arguments) }
    }

    @Test("--adapters keeps the scenario's first adapters and adds standard ones")
    func adapterOverride() throws {
        var options = SimOptions()
        options.adapters = 3
        let scenario = Scenario(
            adapters: [AdapterSpec(address: DeviceAddress("00:11:22:33:44:55")!, name: "mine")], devices: [])
        #expect(options.applied(to: scenario).adapters.map(\.name) == ["mine", "blesim #1", "blesim #2"])
    }
}
