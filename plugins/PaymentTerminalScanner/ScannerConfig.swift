import JSON
import RoleKit

/// The scanner's settings, from roles.json's `roles.central.config`
/// (docs/profiles/payment-terminal.md, "The lane"). Every field is optional;
/// an unknown field or a value out of range is a `PluginConfigError` naming it.
public struct ScannerConfig: Sendable, Hashable {
    /// The weakest smoothed RSSI (dBm) a terminal may have to be chosen automatically.
    public var rssiThreshold: Double = -75
    /// How many dB a challenger must beat the chosen terminal by.
    public var margin: Double = 6
    /// How long (seconds) a challenger must keep that lead before it takes over.
    public var dwellSeconds: Double = 3
    /// How long (seconds) an unheard terminal stays in the table.
    public var expirySeconds: Double = 10
    /// How long (seconds) the lane listens, from the first terminal heard, before its first choice.
    public var settleSeconds: Double = 1
    /// How long (seconds) pos.pay waits for the final status before answering 1003.
    public var paymentDeadlineSeconds: Double = 30
    /// How often (seconds) unsettled payments no pos.pay waits for are queried
    /// again while the terminal is connected (a lost answer, a busy resend).
    public var requerySeconds: Double = 5
    /// The journal's file name in the plugin's state directory.
    public var journal: String = "payments.journal"

    /// The selection policy these settings describe.
    public var policy: SelectionPolicy {
        SelectionPolicy(
            thresholdDBm: rssiThreshold, marginDB: margin, dwell: .milliseconds(Int64(dwellSeconds * 1000)),
            expiry: .milliseconds(Int64(expirySeconds * 1000)), settle: .milliseconds(Int64(settleSeconds * 1000)))
    }

    /// The defaults.
    public init() {}

    /// Reads the plugin's `config` object.
    public init(json: JSON) throws(PluginConfigError) {
        if json.isNull { return }
        guard let object = json.objectValue else { throw PluginConfigError(path: "", "expected an object") }
        let known = [
            "rssiThreshold", "margin", "dwell", "expiry", "settle", "paymentDeadlineSeconds", "requerySeconds",
            "journal",
        ]
        for key in object.keys where !known.contains(key) {
            throw PluginConfigError(path: key, "unknown field")
        }
        rssiThreshold = try Self.number(object["rssiThreshold"], "rssiThreshold", -127...20) ?? rssiThreshold
        margin = try Self.number(object["margin"], "margin", 0...60) ?? margin
        dwellSeconds = try Self.number(object["dwell"], "dwell", 0...3600) ?? dwellSeconds
        expirySeconds = try Self.number(object["expiry"], "expiry", 0.1...3600) ?? expirySeconds
        settleSeconds = try Self.number(object["settle"], "settle", 0...60) ?? settleSeconds
        paymentDeadlineSeconds =
            try Self.number(object["paymentDeadlineSeconds"], "paymentDeadlineSeconds", 0.1...3600)
            ?? paymentDeadlineSeconds
        requerySeconds = try Self.number(object["requerySeconds"], "requerySeconds", 0.1...3600) ?? requerySeconds
        if let value = object["journal"] {
            guard let name = value.stringValue, !name.isEmpty, !name.contains("/"), !name.hasPrefix(".") else {
                throw PluginConfigError(path: "journal", "expected a plain file name (no / and no leading .)")
            }
            journal = name
        }
    }

    private static func number(
        _ value: JSON?, _ path: String, _ range: ClosedRange<Double>
    ) throws(PluginConfigError)
        -> Double?
    {
        guard let value else { return nil }
        guard let number = value.doubleValue, range.contains(number) else {
            throw PluginConfigError(path: path, "expected a number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }
}
