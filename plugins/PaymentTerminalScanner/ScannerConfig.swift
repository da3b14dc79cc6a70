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

    /// Reads the plugin's `config` object; every problem is reported, each
    /// named by its field.
    public init(json: JSON) throws(JSONFieldErrors) {
        if json.isNull { return }
        let report = JSONFieldReport()
        if let root = JSONFieldReader(json, report: report) {
            root.allowOnly([
                "rssiThreshold", "margin", "dwell", "expiry", "settle", "paymentDeadlineSeconds", "requerySeconds",
                "journal",
            ])
            rssiThreshold = root.number("rssiThreshold", in: -127...20) ?? rssiThreshold
            margin = root.number("margin", in: 0...60) ?? margin
            dwellSeconds = root.number("dwell", in: 0...3600) ?? dwellSeconds
            expirySeconds = root.number("expiry", in: 0.1...3600) ?? expirySeconds
            settleSeconds = root.number("settle", in: 0...60) ?? settleSeconds
            paymentDeadlineSeconds = root.number("paymentDeadlineSeconds", in: 0.1...3600) ?? paymentDeadlineSeconds
            requerySeconds = root.number("requerySeconds", in: 0.1...3600) ?? requerySeconds
            journal =
                root.read("journal", "a plain file name (no / and no leading .)") { value in
                    value.stringValue.flatMap { $0.isEmpty || $0.contains("/") || $0.hasPrefix(".") ? nil : $0 }
                } ?? journal
        }
        try report.check()
    }
}
