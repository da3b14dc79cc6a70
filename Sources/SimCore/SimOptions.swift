/// The command line of `blesim`, parsed and validated before anything runs.
public struct SimOptions: Sendable, Equatable {
    /// `--address BUS`: the D-Bus address to serve on; nil means DBUS_SYSTEM_BUS_ADDRESS, else
    /// the system bus.
    public var address: String?
    /// `--adapters N`: replaces the scenario's adapters by N standard ones.
    public var adapters: Int?
    /// `--scenario FILE`: the scenario to load; nil means the shipped default.
    public var scenarioPath: String?
    /// `--seed N`: replaces the scenario's seed.
    public var seed: UInt64?
    /// `--experimental`: serve the properties `bluetoothd -E` adds (Device1.AdvertisingFlags).
    public var experimental = false
    /// `--extended-advertising`: the adapters' controllers do LE extended advertising.
    public var extendedAdvertising = false
    /// `--help`.
    public var help = false

    /// No options.
    public init() {}

    /// What `blesim --help` prints.
    public static let usage = """
        usage: blesim [--address BUS] [--adapters N] [--scenario FILE] [--seed N] [--experimental]
                     [--extended-advertising]

        Serves BlueZ's D-Bus API (org.bluez, as bluetoothd 5.66) over a simulated air.

          --address BUS     D-Bus address to serve on (default: $DBUS_SYSTEM_BUS_ADDRESS,
                            else the system bus)
          --adapters N      serve N adapters hci0...hciN-1 (1...16), replacing the scenario's
          --scenario FILE   scenario to simulate (default: sim/scenarios/default.json)
          --seed N          random seed, replacing the scenario's
          --experimental    serve experimental properties, as bluetoothd -E
          --extended-advertising
                            adapters whose controllers do LE extended advertising
                            (SupportedSecondaryChannels, 251-byte advertising data)
          --help            show this help

        """

    /// A usage error: what is wrong with the command line (exit status 64).
    public struct UsageError: Error, Equatable, CustomStringConvertible {
        /// The message, without the usage text.
        public let message: String
        /// A usage error saying `message`.
        public init(message: String) { self.message = message }
        public var description: String { message }
    }

    /// Parses `arguments` (without the program name). `--name value` and `--name=value` both work.
    public static func parse(_ arguments: [String]) throws(UsageError) -> SimOptions {
        var options = SimOptions()
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            var name = argument
            var inline: String? = nil
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            }
            func value() throws(UsageError) -> String {
                if let inline { return inline }
                guard let next = rest.popFirst() else { throw UsageError(message: "\(name) needs a value") }
                return next
            }
            switch name {
            case "--address": options.address = try value()
            case "--scenario": options.scenarioPath = try value()
            case "--adapters":
                let text = try value()
                guard let count = Int(text), (1...16).contains(count) else {
                    throw UsageError(message: "--adapters: expected a number from 1 to 16, got \"\(text)\"")
                }
                options.adapters = count
            case "--seed":
                let text = try value()
                guard let seed = UInt64(text) else {
                    throw UsageError(message: "--seed: expected a non-negative integer, got \"\(text)\"")
                }
                options.seed = seed
            case "--experimental": options.experimental = true
            case "--extended-advertising": options.extendedAdvertising = true
            case "--help", "-h": options.help = true
            default: throw UsageError(message: "unknown argument \"\(argument)\"")
            }
        }
        return options
    }

    /// `scenario` with the options' overrides applied.
    public func applied(to scenario: Scenario) -> Scenario {
        var result = scenario
        if let adapters {
            result.adapters = (0..<adapters).map { index in
                index < scenario.adapters.count ? scenario.adapters[index] : .standard(index: index)
            }
        }
        if let seed { result.seed = seed }
        return result
    }
}
