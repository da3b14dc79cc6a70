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
    /// `--att-timeout SECONDS`: replaces the scenario's ATT timeout (tests shorten it).
    public var attTimeout: Double?
    /// `--link SPEC`: turns the link model on (replacing the scenario's).
    public var link: LinkModel?
    /// `--extended-advertising`: the adapters' controllers do LE extended advertising.
    public var extendedAdvertising = false
    /// `--help`.
    public var help = false

    /// No options.
    public init() {}

    /// What `blesim --help` prints.
    public static let usage = """
        usage: blesim [--address BUS] [--adapters N] [--scenario FILE] [--seed N] [--experimental]
                     [--att-timeout SECONDS] [--link interval=MS,phy=1M|2M|coded,packets=N,length=N]
                     [--extended-advertising]

        Serves BlueZ's D-Bus API (org.bluez, as bluetoothd 5.66) over a simulated air.

          --address BUS     D-Bus address to serve on (default: $DBUS_SYSTEM_BUS_ADDRESS,
                            else the system bus)
          --adapters N      serve N adapters hci0...hciN-1 (1...16), replacing the scenario's
          --scenario FILE   scenario to simulate (default: sim/scenarios/default.json, else
                            /usr/share/bleagent/scenarios/default.json when installed)
          --seed N          random seed, replacing the scenario's
          --experimental    serve experimental properties, as bluetoothd -E
          --att-timeout S   seconds before an unanswered ATT request fails and drops the link
                            (default: the scenario's attTimeout, 30 as bluetoothd)
          --link SPEC       cap notifications per link as a real link would; SPEC is
                            interval=MS,phy=1M|2M|coded,packets=N,length=N (each optional;
                            defaults 30, 1M, 6, 251)
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
            case "--att-timeout":
                let text = try value()
                guard let seconds = Double(text), seconds >= 0, seconds <= 600 else {
                    throw UsageError(message: "--att-timeout: expected seconds from 0 to 600, got \"\(text)\"")
                }
                options.attTimeout = seconds
            case "--link": options.link = try linkModel(try value())
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
        if let attTimeout { result.attTimeout = attTimeout }
        if let link { result.link = link }
        return result
    }

    /// `--link interval=MS,phy=1M|2M|coded,packets=N,length=N`, each part optional.
    static func linkModel(_ spec: String) throws(UsageError) -> LinkModel {
        var model = LinkModel()
        for part in spec.split(separator: ",") where !part.isEmpty {
            let pieces = part.split(separator: "=", maxSplits: 1).map(String.init)
            let key = pieces[0]
            let text = pieces.count == 2 ? pieces[1] : ""
            switch key {
            case "interval":
                guard let ms = Double(text), ms >= 7.5, ms <= 4000 else {
                    throw UsageError(
                        message: "--link interval: expected milliseconds from 7.5 to 4000, got \"\(text)\"")
                }
                model.connectionIntervalMs = ms
            case "phy":
                guard let phy = LinkModel.PHY.allCases.first(where: { $0.rawValue.lowercased() == text.lowercased() })
                else { throw UsageError(message: "--link phy: expected 1M, 2M or coded, got \"\(text)\"") }
                model.phy = phy
            case "packets":
                guard let count = Int(text), (1...64).contains(count) else {
                    throw UsageError(message: "--link packets: expected 1 to 64 per connection event, got \"\(text)\"")
                }
                model.maxPacketsPerEvent = count
            case "length":
                guard let octets = Int(text), (27...251).contains(octets) else {
                    throw UsageError(message: "--link length: expected 27 to 251 octets, got \"\(text)\"")
                }
                model.dataLength = octets
            default:
                throw UsageError(message: "--link: unknown part \"\(key)\" (expected interval, phy, packets, length)")
            }
        }
        return model
    }
}
