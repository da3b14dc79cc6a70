import GATT

/// One client's advertisement monitor in effect on an adapter (an `or_patterns`
/// `org.bluez.AdvertisementMonitor1` that bluetoothd activated).
public struct SimMonitor: Sendable, Equatable {
    /// The client's unique bus name.
    public var owner: String
    /// The monitor object's path in the client.
    public var path: String
    /// Its patterns; an advertisement matching any of them is reported.
    public var patterns: [AdvertisementPattern]

    /// A monitor.
    public init(owner: String, path: String, patterns: [AdvertisementPattern]) {
        self.owner = owner
        self.path = path
        self.patterns = patterns
    }
}

/// AdvertisementMonitorManager1's effect on the air, as bluetoothd 5.66 without controller
/// offload: while any monitor is active the controller scans passively, and each report whose
/// AD structures match a monitor's patterns creates or updates the device object (no discovery
/// needed) and is followed by that monitor's DeviceFound. Monitors have no RSSI thresholds here.
extension SimAdapter {
    /// Whether the adapter hears advertisements: discovering, or monitoring.
    public var isListening: Bool { discovering || !monitors.isEmpty }

    /// Puts `monitor` in effect (bluetoothd calls its Activate); one at a path per owner.
    public mutating func activateMonitor(_ monitor: SimMonitor) {
        monitors.removeAll { $0.owner == monitor.owner && $0.path == monitor.path }
        monitors.append(monitor)
    }

    /// Removes `owner`'s monitors at `path` and below (all of `owner`'s for nil); returns them.
    @discardableResult
    public mutating func removeMonitors(owner: String, under path: String? = nil) -> [SimMonitor] {
        let removed = monitors.filter { monitor in
            monitor.owner == owner && (path.map { Self.isPath(monitor.path, under: $0) } ?? true)
        }
        monitors.removeAll { removed.contains($0) }
        return removed
    }

    /// The DeviceFound calls `report` causes: one per monitor whose patterns match.
    func monitorsMatching(_ report: AdvertisingReport) -> [AdapterEvent] {
        guard !monitors.isEmpty else { return [] }
        let structures =
            ((try? report.advertisement.advertisingData.structures()) ?? [])
            + report.advertisement.rawStructures.map {
                AdvertisingStructure(type: AdvertisingDataType($0.type), data: $0.data)
            }
        return monitors.filter { AdvertisementPattern.anyMatches($0.patterns, structures) }.map {
            .monitorDeviceFound(owner: $0.owner, monitor: $0.path, device: report.address)
        }
    }

    /// Whether `path` is `root` or below it.
    public static func isPath(_ path: String, under root: String) -> Bool {
        path == root || path.hasPrefix(root == "/" ? "/" : root + "/")
    }
}

extension SimWorld {
    /// Puts `monitor` in effect on adapter `index` (no such adapter: nothing).
    public mutating func activateMonitor(adapter index: Int, _ monitor: SimMonitor) {
        _ = try? withAdapter(index) { adapter in adapter.activateMonitor(monitor) }
    }

    /// Removes `owner`'s monitors at `path` and below on adapter `index`; returns them.
    public mutating func removeMonitors(adapter index: Int, owner: String, under path: String) -> [SimMonitor] {
        ((try? withAdapter(index) { adapter in adapter.removeMonitors(owner: owner, under: path) }) ?? nil) ?? []
    }
}
