import JSON
import RoleKit

/// The Diagnostics plugin's config (`roles.<role>.config`).
struct DiagnosticsConfig: Sendable, Hashable {
    /// Seconds between `heartbeat` events; 0 turns them off.
    var heartbeatSeconds: Int64 = 30

    /// Reads the config object; unknown fields are errors.
    init(json: JSON) throws(PluginConfigError) {
        guard let object = json.objectValue else { throw PluginConfigError(path: "", "expected an object") }
        for key in object.keys where key != "heartbeatSeconds" {
            throw PluginConfigError(path: key, "unknown field")
        }
        if let value = object["heartbeatSeconds"] {
            guard let seconds = value.intValue, (0...86_400).contains(seconds) else {
                throw PluginConfigError(path: "heartbeatSeconds", "expected an integer from 0 to 86400")
            }
            heartbeatSeconds = seconds
        }
    }
}
