import BLE
import JSON

extension CentralControl {
    /// `central.stats` (docs/control-api.md): the control scan, the device
    /// table and the manager's counters, each queue and table with its bound,
    /// what waits now and what its overflow policy dropped or merged.
    func stats(_ central: CentralManager) -> JSON {
        let (scan, counts, table) = state.withLock { state in (state.scan?.stream, state.counts, state.devices) }
        let manager = central.statistics
        let mirror = manager.mirror
        var controlScan: JSONObject = [
            "active": .bool(scan != nil),
            "scans": .int(Int64(counts.scans)),
            "discoveries": .int(Int64(counts.discoveries)),
            "reports": .int(Int64(counts.reports)),
        ]
        if let scan { controlScan["queue"] = Self.json(scan.counters, capacity: scan.capacity) }
        return [
            "controlScan": .object(controlScan),
            "devices": [
                "rows": .int(Int64(table.count)), "capacity": .int(Int64(table.capacity)),
                "expirySeconds": .int(table.expiry.components.seconds),
                "expired": .int(Int64(table.counters.expired)), "evicted": .int(Int64(table.counters.evicted)),
            ],
            "manager": [
                "events": .int(Int64(manager.events)),
                "advertisementReports": .int(Int64(manager.advertisementReports)),
                "otherAdapterReports": .int(Int64(manager.otherAdapterReports)),
                "monitorDevicesFound": .int(Int64(manager.monitorDevicesFound)),
                "monitorDevicesLost": .int(Int64(manager.monitorDevicesLost)),
                "monitorFallbacks": .int(Int64(manager.monitorFallbacks)),
                "mirror": [
                    "objects": .int(Int64(mirror.objects)), "devices": .int(Int64(mirror.devices)),
                    "prunableDevices": .int(Int64(mirror.prunableDevices)),
                    "maximumDevices": .int(Int64(mirror.limits.maximumDevices)),
                    "staleSeconds": .int(mirror.limits.staleDeviceAge.components.seconds),
                    "expired": .int(Int64(mirror.counters.devicesExpired)),
                    "evicted": .int(Int64(mirror.counters.devicesEvicted)),
                    "bufferedDeltasDropped": .int(Int64(mirror.counters.bufferedDeltasDropped)),
                    "unknownObjectSignals": .int(Int64(mirror.counters.unknownObjectSignals)),
                    "oversizedValues": .int(Int64(mirror.counters.oversizedValues)),
                    "maximumObjects": .int(Int64(mirror.limits.maximumObjects)),
                    "objectsRefused": .int(Int64(mirror.counters.objectsRefused)),
                ],
                "refreshes": [
                    "requested": .int(Int64(manager.refreshes.requested)),
                    "merged": .int(Int64(manager.refreshes.merged)),
                    "dropped": .int(Int64(manager.refreshes.dropped)),
                    "started": .int(Int64(manager.refreshes.started)),
                    "finished": .int(Int64(manager.refreshes.finished)),
                    "inFlight": .int(Int64(manager.refreshes.inFlight)),
                    "waiting": .int(Int64(manager.refreshes.waiting)),
                ],
                "scans": Self.json(manager.scans, count: manager.scanCount),
                "notifications": Self.json(
                    manager.notifications, count: manager.notificationStreams, pauses: manager.notificationPauses),
                "heldNotifications": Self.json(manager.heldNotifications),
                "streamDrops": .object(
                    JSONObject(
                        manager.streamDrops.sorted { $0.key < $1.key }.map { ($0.key, JSON.int(Int64($0.value))) })),
            ],
        ]
    }

    /// The summary `agent.status` shows under `central` while the role runs, else nil.
    public func statusSummary() -> JSON? {
        guard let central = state.withLock({ $0.central }) else { return nil }
        let (rows, restored) = state.withLock { ($0.devices.count, $0.restored) }
        let manager = central.statistics
        let dropped =
            manager.scans.dropped + manager.notifications.dropped + manager.heldNotifications.dropped
            + manager.refreshes.dropped
            + manager.mirror.counters.bufferedDeltasDropped + manager.mirror.counters.oversizedValues
            + manager.mirror.counters.objectsRefused
            + manager.streamDrops.values.reduce(0, +)
        return [
            "devices": .int(Int64(rows)), "mirroredDevices": .int(Int64(manager.mirror.devices)),
            "advertisementReports": .int(Int64(manager.advertisementReports)),
            "merged": .int(Int64(manager.scans.merged)), "dropped": .int(Int64(dropped)),
            "restored": restored ?? .null,
        ]
    }

    private static func json(
        _ counters: QueueCounters, capacity: Int? = nil, count: Int? = nil, pauses: Int? = nil
    )
        -> JSON
    {
        var object: JSONObject = [
            "offered": .int(Int64(counters.offered)), "delivered": .int(Int64(counters.delivered)),
            "merged": .int(Int64(counters.merged)), "dropped": .int(Int64(counters.dropped)),
            "waiting": .int(Int64(counters.waiting)), "highWater": .int(Int64(counters.highWater)),
        ]
        if let capacity { object["capacity"] = .int(Int64(capacity)) }
        if let count { object["open"] = .int(Int64(count)) }
        if let pauses { object["pauses"] = .int(Int64(pauses)) }
        return .object(object)
    }
}
