import BLETesting
import Glibc
import JSON
import RoleKit
import SensorAggregator
import Synchronization

/// A config with one sensor of each source type, used across the suites.
let sampleConfigText = """
    {
      "sensors": [
        {"id": "room", "kind": "temperature",
         "source": {"type": "file", "path": "/sys/class/hwmon/hwmon0/temp1_input", "scale": 0.001, "pollSeconds": 5},
         "notifyDelta": 0.2, "thresholds": {"low": 5, "high": 35}},
        {"id": "hum", "kind": "humidity",
         "source": {"type": "simulated", "waveform": "sine", "base": 45, "amplitude": 10, "periodSeconds": 600,
                    "noise": 0.5, "seed": 42, "pollSeconds": 2}},
        {"id": "baro", "kind": "pressure", "source": {"type": "ingest"}, "notifyDelta": 50},
        {"id": "co2", "kind": "generic", "unit": "ppm", "source": {"type": "ingest"}}
      ],
      "ingest": {"socketPath": "/run/bleagent/sensor-ingest.sock"},
      "windowSeconds": 300,
      "notification": {"intervalSeconds": 10, "queueLimit": 2},
      "flushSeconds": 30,
      "advertising": {"localName": "bleagent-sensor", "bthome": true},
      "deviceInformation": {"manufacturer": "bleagent", "model": "gateway-1"}
    }
    """

func sampleConfig() throws -> SensorAggregatorConfig {
    try SensorAggregatorConfig(json: JSON(parsing: sampleConfigText))
}

/// Writing and listing files in the kit's temporary directory.
extension TemporaryDirectory {
    func write(_ name: String, _ text: String) {
        let fd = open("\(path)/\(name)", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        _ = Array(text.utf8).withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    func entries() -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}

/// Collects log lines.
final class LogRecorder: Sendable {
    private let lines = Mutex<[String]>([])
    var logger: PluginLogger {
        PluginLogger { [self] level, message in self.lines.withLock { $0.append("\(level): \(message)") } }
    }
    var all: [String] { lines.withLock { $0 } }
}
