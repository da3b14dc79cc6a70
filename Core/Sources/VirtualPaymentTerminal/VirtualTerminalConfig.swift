import JSON
import PaymentTerminalProfile

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

    /// Reads the JSON config (docs/profiles/payment-terminal.md, "Virtual
    /// terminal"). Unknown fields are errors; every problem is reported with
    /// its field path.
    public init(json: JSON) throws(JSONFieldErrors) {
        let report = JSONFieldReport()
        guard let root = JSONFieldReader(json, report: report) else { throw JSONFieldErrors(report.errors) }
        root.allowOnly([
            "name", "terminalId", "vendor", "model", "firmware", "capabilities", "batteryLevel", "latencyMs", "rules",
        ])
        let name = root.string("name", maxBytes: Self.maximumNameLength) ?? "Payment Terminal"
        let fieldMaximum = TerminalInfo.maximumFieldLength
        let terminalID = root.string("terminalId", maxBytes: fieldMaximum) ?? "VT-0001"
        let vendor = root.string("vendor", maxBytes: fieldMaximum) ?? "bleagent"
        let model = root.string("model", maxBytes: fieldMaximum) ?? "Virtual Terminal"
        let firmware = root.string("firmware", maxBytes: fieldMaximum) ?? "1.0.0"
        var capabilities: TerminalCapabilities = [.contactless, .chip, .pinEntry]
        if let names = root.array("capabilities") {
            capabilities = []
            for (index, element) in names.enumerated() {
                guard let capability = element.stringValue.flatMap(TerminalCapabilities.init(name:)) else {
                    report.add(
                        path: root.path(of: "capabilities") + "[\(index)]",
                        "expected one of contactless, chip, magneticStripe, pinEntry, printer, found "
                            + JSONFieldError.describe(element))
                    continue
                }
                capabilities.insert(capability)
            }
        }
        batteryLevel = UInt8(truncatingIfNeeded: root.integer("batteryLevel", in: 0...100) ?? 100)
        latency = .milliseconds(root.integer("latencyMs", in: 0...600_000) ?? 1500)
        rules = []
        for (index, element) in (root.array("rules") ?? []).enumerated() {
            if let reader = JSONFieldReader(element, path: "rules[\(index)]", report: report),
                let rule = TerminalRule(reading: reader)
            {
                rules.append(rule)
            }
        }
        self.name = name
        try report.check()
        do {
            info = try TerminalInfo(
                terminalID: terminalID, vendor: vendor, model: model, firmware: firmware, capabilities: capabilities)
        } catch {
            throw JSONFieldErrors([JSONFieldError(path: error.field, error.reason)])
        }
    }
}
