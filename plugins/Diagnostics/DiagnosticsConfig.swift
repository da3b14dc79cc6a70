import JSON
import RoleKit

/// The Diagnostics plugin's config (`roles.<role>.config`).
struct DiagnosticsConfig: Sendable, Hashable {
    /// Seconds between `heartbeat` events; 0 turns them off.
    var heartbeatSeconds: Int64 = 30

    /// Reads the config object; unknown fields are errors, and every problem is reported.
    init(json: JSON) throws(JSONFieldErrors) {
        let report = JSONFieldReport()
        if let root = JSONFieldReader(json, report: report) {
            root.allowOnly(["heartbeatSeconds"])
            heartbeatSeconds = root.integer("heartbeatSeconds", in: 0...86_400) ?? heartbeatSeconds
        }
        try report.check()
    }
}
