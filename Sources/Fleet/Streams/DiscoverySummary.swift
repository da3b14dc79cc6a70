import JSON

/// `discovered` events folded into one summary per interval: a crowded room
/// reports thousands of advertisements a second, the broker gets one message
/// per `discoverySeconds`. Devices are coalesced by id (the newest name and
/// RSSI win, reports are counted); at most ``maxDevices`` are tracked per
/// interval, the reports of the rest are counted as `untracked`.
struct DiscoverySummary: Sendable {
    static let maxDevices = 256

    private struct Device: Sendable {
        var name: JSON
        var rssi: JSON
        var reports: Int64
    }

    private var devices: [String: Device] = [:]
    private var order: [String] = []
    private var reports: Int64 = 0
    private var untracked: Int64 = 0

    /// Whether anything arrived since the last summary.
    var isEmpty: Bool { reports == 0 }

    /// Folds in one `discovered` event's data (`{"id","name","rssi"}`).
    mutating func add(_ data: JSON) {
        reports += 1
        guard let id = data["id"]?.stringValue else { return }
        if var device = devices[id] {
            device.reports += 1
            if let name = data["name"], name != .null { device.name = name }
            device.rssi = data["rssi"] ?? .null
            devices[id] = device
        } else if devices.count < Self.maxDevices {
            devices[id] = Device(name: data["name"] ?? .null, rssi: data["rssi"] ?? .null, reports: 1)
            order.append(id)
        } else {
            untracked += 1
        }
    }

    /// The summary of the interval that ends now, and a fresh interval.
    mutating func take(intervalSeconds: Int) -> JSON {
        let list: [JSON] = order.compactMap { id in
            guard let device = devices[id] else { return nil }
            return ["id": .string(id), "name": device.name, "rssi": device.rssi, "reports": .int(device.reports)]
        }
        let summary: JSON = [
            "intervalSeconds": .int(Int64(intervalSeconds)), "reports": .int(reports),
            "devices": .array(list), "untracked": .int(untracked),
        ]
        self = DiscoverySummary()
        return summary
    }
}
