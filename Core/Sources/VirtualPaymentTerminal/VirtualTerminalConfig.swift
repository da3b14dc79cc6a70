import JSON
import PaymentTerminalProfile

/// A problem in a virtual terminal's JSON config, named by its field path
/// (`rules[1].outcome`).
public struct VirtualTerminalConfigError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The dotted path of the field at fault; empty for the whole config.
    public var path: String
    /// What is wrong.
    public var message: String

    /// An error at `path`.
    public init(path: String, _ message: String) {
        self.path = path
        self.message = message
    }

    /// `PATH: message`.
    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}

/// A virtual terminal's settings: what it advertises, says about itself,
/// and how it decides.
public struct VirtualTerminalConfig: Sendable, Hashable {
    /// The longest advertising name (``PaymentTerminalProfile/maximumLocalNameLength``).
    public static let maximumNameLength = PaymentTerminalProfile.maximumLocalNameLength

    /// The advertised local name.
    public var name: String
    /// Terminal Info and Device Information.
    public var info: TerminalInfo
    /// Battery level, 0 ... 100.
    public var batteryLevel: UInt8
    /// A transaction becomes final this long after it is accepted.
    public var latency: Duration
    /// The rules, in order.
    public var rules: [TerminalRule]

    /// A config from values.
    public init(name: String, info: TerminalInfo, batteryLevel: UInt8, latency: Duration, rules: [TerminalRule]) {
        self.name = name
        self.info = info
        self.batteryLevel = batteryLevel
        self.latency = latency
        self.rules = rules
    }

    private static let fields: Set<String> = [
        "name", "terminalId", "vendor", "model", "firmware", "capabilities", "batteryLevel", "latencyMs", "rules",
    ]

    /// Reads the JSON config (docs/profiles/payment-terminal.md, "Virtual
    /// terminal"). Unknown fields are errors; every error names its field path.
    public init(json: JSON) throws(VirtualTerminalConfigError) {
        guard let object = json.objectValue else { throw VirtualTerminalConfigError(path: "", "expected an object") }
        for key in object.keys where !Self.fields.contains(key) {
            throw VirtualTerminalConfigError(path: key, "unknown field")
        }
        let name: String = try Self.string(object, "name", maximum: Self.maximumNameLength) ?? "Payment Terminal"
        guard !name.isEmpty else { throw VirtualTerminalConfigError(path: "name", "must not be empty") }
        let fieldMaximum = TerminalInfo.maximumFieldLength
        let terminalID: String = try Self.string(object, "terminalId", maximum: fieldMaximum) ?? "VT-0001"
        let vendor: String = try Self.string(object, "vendor", maximum: fieldMaximum) ?? "bleagent"
        let model: String = try Self.string(object, "model", maximum: fieldMaximum) ?? "Virtual Terminal"
        let firmware: String = try Self.string(object, "firmware", maximum: fieldMaximum) ?? "1.0.0"
        let capabilities = try Self.capabilities(object["capabilities"])
        do {
            info = try TerminalInfo(
                terminalID: terminalID, vendor: vendor, model: model, firmware: firmware, capabilities: capabilities)
        } catch {
            throw VirtualTerminalConfigError(path: error.field, error.reason)
        }
        self.name = name
        let battery: Int64 = try Self.integer(object, "batteryLevel", in: 0...100) ?? 100
        batteryLevel = UInt8(truncatingIfNeeded: battery)
        let latencyMilliseconds: Int64 = try Self.integer(object, "latencyMs", in: 0...600_000) ?? 1500
        latency = Duration.milliseconds(latencyMilliseconds)
        rules = []
        if let value = object["rules"] {
            guard let array = value.arrayValue else {
                throw VirtualTerminalConfigError(path: "rules", "expected an array")
            }
            for (index, element) in array.enumerated() {
                rules.append(try TerminalRule(json: element, path: "rules[\(index)]"))
            }
        }
    }

    private static func capabilities(_ json: JSON?) throws(VirtualTerminalConfigError) -> TerminalCapabilities {
        guard let json else { return [.contactless, .chip, .pinEntry] }
        guard let array = json.arrayValue else {
            throw VirtualTerminalConfigError(path: "capabilities", "expected an array of names")
        }
        var capabilities: TerminalCapabilities = []
        for (index, element) in array.enumerated() {
            guard let text = element.stringValue, let capability = TerminalCapabilities(name: text) else {
                throw VirtualTerminalConfigError(
                    path: "capabilities[\(index)]",
                    "expected one of contactless, chip, magneticStripe, pinEntry, printer")
            }
            capabilities.insert(capability)
        }
        return capabilities
    }

    static func string(
        _ object: JSONObject, _ key: String, maximum: Int, path: String? = nil
    )
        throws(VirtualTerminalConfigError) -> String?
    {
        guard let value = object[key] else { return nil }
        guard let text = value.stringValue, text.utf8.count <= maximum else {
            throw VirtualTerminalConfigError(path: path ?? key, "expected a string of at most \(maximum) bytes")
        }
        return text
    }

    private static func integer(
        _ object: JSONObject, _ key: String, in range: ClosedRange<Int64>
    )
        throws(VirtualTerminalConfigError) -> Int64?
    {
        guard let value = object[key] else { return nil }
        guard let number = value.intValue, range.contains(number) else {
            throw VirtualTerminalConfigError(
                path: key, "expected an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }
}
