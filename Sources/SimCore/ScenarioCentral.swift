import GATT

/// A virtual central declared by a scenario (`centrals`): what Control1's CentralConnect /
/// CentralRead / CentralWrite / CentralSubscribe / CentralDisconnect do, at times of the scenario
/// (format: docs/blesim.md, "Virtual centrals (`centrals`)").
public struct ScenarioCentral: Sendable, Equatable {
    /// When the step times start.
    public enum Trigger: Sendable, Equatable {
        /// blesim's start.
        case start
        /// The first moment the adapter has a registered application (the default).
        case application
    }

    /// What a step does.
    public enum Action: Sendable, Equatable {
        /// Connect to the adapter's applications.
        case connect
        /// End the link.
        case disconnect
        /// Read the characteristic with this UUID.
        case read(BluetoothUUID)
        /// Write `value`, with or without response.
        case write(BluetoothUUID, value: [UInt8], withResponse: Bool)
        /// Subscribe (true) or unsubscribe (false).
        case subscribe(BluetoothUUID, Bool)
    }

    /// One timed action.
    public struct Step: Sendable, Equatable {
        /// Seconds after the trigger.
        public var at: Double
        /// What it does.
        public var action: Action

        /// A step.
        public init(at: Double, action: Action) {
            self.at = at
            self.action = action
        }
    }

    /// The adapter (hciN index) whose peripheral role the central connects to.
    public var adapter: Int
    /// When the times start.
    public var trigger: Trigger
    /// The steps, in time order.
    public var steps: [Step]

    /// A central from its parts; steps are kept in time order (file order for equal times).
    public init(adapter: Int, trigger: Trigger = .application, steps: [Step]) {
        self.adapter = adapter
        self.trigger = trigger
        self.steps = steps.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }.map(
            \.element)
    }
}

extension Scenario {
    /// Reads `centrals`, checking adapters against the parsed scenario (one central per adapter:
    /// blesim has one virtual central address).
    static func parseCentrals(
        _ field: ScenarioField, adapterCount: Int
    ) throws(ScenarioError) -> [ScenarioCentral] {
        var out: [ScenarioCentral] = []
        for item in try field.array() {
            let keys = try item.object(allowing: ["adapter", "after", "steps", "description"])
            let adapter = Int(try keys["adapter"]?.integer(in: 0...15) ?? 0)
            guard adapter < adapterCount else {
                throw ScenarioError(path: item.child("adapter"), message: "no adapter hci\(adapter) in this scenario")
            }
            guard !out.contains(where: { $0.adapter == adapter }) else {
                throw ScenarioError(path: item.child("adapter"), message: "a second central for hci\(adapter)")
            }
            var trigger = ScenarioCentral.Trigger.application
            if let after = keys["after"] {
                switch try after.string() {
                case "start": trigger = .start
                case "application": break
                default: throw after.error("expected \"application\" or \"start\"")
                }
            }
            guard let stepsField = keys["steps"] else {
                throw ScenarioError(path: item.child("steps"), message: "missing")
            }
            var steps: [ScenarioCentral.Step] = []
            for step in try stepsField.array() { steps.append(try parseCentralStep(step)) }
            out.append(ScenarioCentral(adapter: adapter, trigger: trigger, steps: steps))
        }
        return out
    }

    private static func parseCentralStep(_ item: ScenarioField) throws(ScenarioError) -> ScenarioCentral.Step {
        let keys = try item.object(allowing: ["at", "action", "uuid", "value", "withResponse"])
        let at = try keys["at"]?.number(in: 0...1e9) ?? 0
        guard let actionField = keys["action"] else {
            throw ScenarioError(path: item.child("action"), message: "missing")
        }
        func uuid() throws(ScenarioError) -> BluetoothUUID {
            guard let field = keys["uuid"] else { throw ScenarioError(path: item.child("uuid"), message: "missing") }
            return try field.uuid()
        }
        let name = try actionField.string()
        let allowed: Set<String>
        let action: ScenarioCentral.Action
        switch name {
        case "connect":
            allowed = []
            action = .connect
        case "disconnect":
            allowed = []
            action = .disconnect
        case "read":
            allowed = ["uuid"]
            action = .read(try uuid())
        case "write":
            allowed = ["uuid", "value", "withResponse"]
            guard let value = keys["value"] else {
                throw ScenarioError(path: item.child("value"), message: "missing")
            }
            action = .write(
                try uuid(), value: try parseValue(value), withResponse: try keys["withResponse"]?.bool() ?? true)
        case "subscribe", "unsubscribe":
            allowed = ["uuid"]
            action = .subscribe(try uuid(), name == "subscribe")
        default:
            throw actionField.error(
                "unknown action \"\(name)\" (expected connect, disconnect, read, write, subscribe or unsubscribe)")
        }
        for key in keys.keys.sorted() where !allowed.union(["at", "action"]).contains(key) {
            throw ScenarioError(path: item.child(key), message: "not a key of a \(name) step")
        }
        return ScenarioCentral.Step(at: at, action: action)
    }
}
