import AgentCore
import JSON
import PaymentTerminalScanner
import SensorAggregator
import VirtualPaymentTerminal

/// roles.json as the agent reads it at start, on reload and in
/// `--check-config`: the JSON, the agent's own validation, and every role's
/// `config` given to each shipped plugin's config reader.
///
/// Checks: a rejected config names at least one problem, each with a message.
enum RolesConfigTarget {
    static let target = FuzzTarget(
        name: "roles-config", summary: "roles.json: the agent's config and each plugin's role config",
        seeds: { seeds }, seedFiles: seedFiles, body: run)

    static func run(_ input: [UInt8]) throws(FuzzFinding) {
        guard let json = try? JSON(parsing: input) else { return }
        do {
            _ = try AgentConfig(json: json, file: "/etc/bleagent/roles.json")
        } catch {
            try require(!error.issues.isEmpty, "a config refused without a reason: \(json)")
            try require(error.issues.allSatisfy { !$0.message.isEmpty }, "an issue without a message: \(error)")
        }
        for role in json["roles"]?.objectValue?.values ?? [] {
            pluginConfigs(role["config"] ?? .object([:]))
        }
    }

    /// The shipped plugins' readers of a role's `config`.
    static func pluginConfigs(_ config: JSON) {
        _ = try? ScannerConfig(json: config)
        _ = try? SensorAggregatorConfig(json: config)
        _ = try? VirtualTerminalConfig(json: config)
    }

    /// The shipped roles.json, the config tests' fixtures and the plugin
    /// configs their tests use, relative to the repository.
    static let seedFiles = [
        "roles.json", "Tests/AgentCoreTests/Fixtures/bad-bluez.json", "Tests/AgentCoreTests/Fixtures/bad-modes.json",
        "Tests/AgentCoreTests/Fixtures/bad-sim.json", "Tests/AgentCoreTests/Fixtures/bad-uids.json",
        "Tests/AgentCoreTests/Fixtures/bluez-options.json", "Tests/AgentCoreTests/Fixtures/empty-object.json",
        "Tests/AgentCoreTests/Fixtures/missing-selected-role.json", "Tests/AgentCoreTests/Fixtures/unknown-fields.json",
        "Tests/AgentCoreTests/Fixtures/valid-full.json", "Tests/AgentCoreTests/Fixtures/valid-minimal.json",
        "Tests/AgentCoreTests/Fixtures/valid-sim.json", "Tests/AgentCoreTests/Fixtures/wrong-types.json",
    ]

    static let seeds: [[UInt8]] = [
        #"""
        {"version":1,"role":"peripheral","backend":"sim","roles":{"peripheral":{"plugin":"VirtualPaymentTerminal",
        "config":{"name":"POS-1","terminalId":"T-0001","vendor":"Acme","model":"V1","firmware":"1.0",
        "batteryLevel":90,"latencyMilliseconds":200,"rules":[{"amountAbove":100000,"decline":"insufficientFunds"}]}}}}
        """#,
        #"""
        {"version":1,"role":"peripheral","roles":{"peripheral":{"plugin":"SensorAggregator","config":{
        "sensors":[{"id":"baro","kind":"pressure","unit":"Pa","source":{"type":"ingest"}},
        {"id":"t","kind":"temperature","source":{"type":"file","path":"/sys/t","scale":0.001,"pollSeconds":5}}],
        "ingest":{"socket":"/run/ingest.sock","maxLineBytes":512},"windowSeconds":300,
        "notification":{"intervalSeconds":10,"queueLimit":8},"advertising":{"localName":"node","bthome":true}}}}}
        """#,
    ].map(\.bytes)
}
