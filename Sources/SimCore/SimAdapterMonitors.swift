import GATT

/// One client's advertisement monitor in effect on an adapter (an `or_patterns`
/// `org.bluez.AdvertisementMonitor1` that bluetoothd activated).
public struct SimMonitor: Sendable, Equatable {
    /// RSSI thresholds as bluetoothd keeps them once its `parse_rssi_and_timeout` filled in the defaults.
    public struct RSSIFilter: Sendable, Equatable {
        /// dBm: a device is found once its RSSI stays above this for `highTimeout` seconds.
        public var high: Int
        /// dBm: a found device is lost once its RSSI stays below this (or it goes unheard) for `lowTimeout` seconds.
        public var low: Int
        /// Seconds.
        public var highTimeout: Int
        /// Seconds.
        public var lowTimeout: Int

        /// A filter.
        public init(high: Int, low: Int, highTimeout: Int, lowTimeout: Int) {
            self.high = high
            self.low = low
            self.highTimeout = highTimeout
            self.lowTimeout = lowTimeout
        }
    }

    /// The client's unique bus name.
    public var owner: String
    /// The monitor object's path in the client.
    public var path: String
    /// Its patterns; an advertisement matching any of them is reported.
    public var patterns: [AdvertisementPattern]
    /// Its RSSI thresholds; nil when the monitor sets none (every matching report is a DeviceFound).
    public var rssi: RSSIFilter?

    /// A monitor.
    public init(owner: String, path: String, patterns: [AdvertisementPattern], rssi: RSSIFilter? = nil) {
        self.owner = owner
        self.path = path
        self.patterns = patterns
        self.rssi = rssi
    }
}

extension SimMonitor.RSSIFilter {
    /// What a monitor's RSSI properties make.
    public enum Parsed: Sendable, Equatable {
        /// None set (or each at its unset value): every matching report is a DeviceFound.
        case none
        /// Thresholds, the unset ones filled in.
        case filter(SimMonitor.RSSIFilter)
        /// A value out of range: bluetoothd releases the monitor.
        case invalid

        /// The thresholds, if any.
        public var filter: SimMonitor.RSSIFilter? {
            if case .filter(let filter) = self { filter } else { nil }
        }
    }

    /// bluetoothd 5.66's `parse_rssi_and_timeout` on the monitor's `RSSIHighThreshold`, `RSSIHighTimeout`,
    /// `RSSILowThreshold`, `RSSILowTimeout` and `RSSISamplingPeriod` (nil: the property is absent). A partial
    /// set is filled in (low -127 dBm, high the low threshold, low timeout 5 s, high timeout 10 s); thresholds
    /// must lie in -127...20 dBm with high at least low, timeouts in 1...300 s, the sampling period at most 255.
    public static func parsing(
        high: Int?, highTimeout: Int?, low: Int?, lowTimeout: Int?, samplingPeriod: Int?
    ) -> Parsed {
        let unsetRSSI = 127
        let unsetTimeout = 0
        let unsetSampling = 256
        let (high, low) = (high ?? unsetRSSI, low ?? unsetRSSI)
        let (highTimeout, lowTimeout) = (highTimeout ?? unsetTimeout, lowTimeout ?? unsetTimeout)
        let sampling = samplingPeriod ?? unsetSampling
        if high == unsetRSSI && low == unsetRSSI && highTimeout == unsetTimeout && lowTimeout == unsetTimeout
            && sampling == unsetSampling
        {
            return .none
        }
        let filledLow = low == unsetRSSI ? -127 : low
        let filter = SimMonitor.RSSIFilter(
            high: high == unsetRSSI ? filledLow : high, low: filledLow,
            highTimeout: highTimeout == unsetTimeout ? 10 : highTimeout,
            lowTimeout: lowTimeout == unsetTimeout ? 5 : lowTimeout)
        let thresholds = -127...20
        let timeouts = 1...300
        guard thresholds.contains(filter.high), thresholds.contains(filter.low), filter.high >= filter.low,
            timeouts.contains(filter.highTimeout), timeouts.contains(filter.lowTimeout),
            sampling == unsetSampling || sampling <= 255
        else { return .invalid }
        return .filter(filter)
    }
}

/// A monitor's view of a device, by the monitor's owner and path and the device's address.
struct MonitorDeviceKey: Hashable, Sendable {
    var owner: String
    var monitor: String
    var device: DeviceAddress
}

/// What a monitor with RSSI thresholds knows of one device (bluetoothd's `adv_monitor_device`); the
/// seconds are whole seconds of simulation time, as bluetoothd counts `time(NULL)`.
struct MonitorDeviceState: Sendable {
    var found = false
    var highFirstSeen: Int64?
    var lowFirstSeen: Int64?
    var lastSeen: Int64?
    /// When a found device is lost unless heard again.
    var lostAt: SimInstant?
}

/// AdvertisementMonitorManager1's effect on the air, as bluetoothd 5.66 without controller
/// offload: while any monitor is active the controller scans passively, and each report whose
/// AD structures match a monitor's patterns creates or updates the device object (no discovery
/// needed). A monitor without RSSI thresholds then gets DeviceFound for every such report; one
/// with thresholds gets DeviceFound once the device's RSSI stayed above the high threshold for the
/// high timeout, and DeviceLost once it stayed below the low threshold, or went unheard, for the
/// low timeout (`adv_monitor_filter_rssi`, `handle_device_lost_timeout`). The sampling period,
/// which only a controller offloading the monitor uses, is not modelled.
extension SimAdapter {
    /// Whether the adapter hears advertisements: discovering, or monitoring.
    public var isListening: Bool { discovering || !monitors.isEmpty }

    /// Puts `monitor` in effect (bluetoothd calls its Activate); one at a path per owner.
    public mutating func activateMonitor(_ monitor: SimMonitor) {
        monitors.removeAll { $0.owner == monitor.owner && $0.path == monitor.path }
        forgetMonitorDevices { $0.owner == monitor.owner && $0.monitor == monitor.path }
        monitors.append(monitor)
    }

    /// Removes `owner`'s monitors at `path` and below (all of `owner`'s for nil); returns them.
    @discardableResult
    public mutating func removeMonitors(owner: String, under path: String? = nil) -> [SimMonitor] {
        let removed = monitors.filter { monitor in
            monitor.owner == owner && (path.map { Self.isPath(monitor.path, under: $0) } ?? true)
        }
        monitors.removeAll { removed.contains($0) }
        forgetMonitorDevices { key in removed.contains { $0.owner == key.owner && $0.path == key.monitor } }
        return removed
    }

    /// What a report did to the monitors: whether it matched one, and the calls it causes.
    typealias MonitorOutcome = (matched: Bool, events: [AdapterEvent])

    /// Whether `report` matches a monitor's patterns (then it creates or updates the device object), and the
    /// DeviceFound / DeviceLost calls it causes.
    mutating func monitorsMatching(_ report: AdvertisingReport, at now: SimInstant) -> MonitorOutcome {
        guard !monitors.isEmpty else { return (false, []) }
        let structures =
            ((try? report.advertisement.advertisingData.structures()) ?? [])
            + report.advertisement.rawStructures.map {
                AdvertisingStructure(type: AdvertisingDataType($0.type), data: $0.data)
            }
        var matched = false
        var events: [AdapterEvent] = []
        for monitor in monitors where AdvertisementPattern.anyMatches(monitor.patterns, structures) {
            matched = true
            guard let filter = monitor.rssi else {
                events.append(.monitorDeviceFound(owner: monitor.owner, monitor: monitor.path, device: report.address))
                continue
            }
            let key = MonitorDeviceKey(owner: monitor.owner, monitor: monitor.path, device: report.address)
            var state = monitorDevices[key] ?? MonitorDeviceState()
            if let event = Self.filter(&state, key, filter, rssi: Int(report.rssi), at: now) { events.append(event) }
            if let lostAt = state.lostAt { monitorLostTimers.schedule(key, at: lostAt) }
            monitorDevices[key] = state
        }
        return (matched, events)
    }

    /// bluetoothd 5.66's `adv_monitor_filter_rssi` for one report of the device.
    private static func filter(
        _ state: inout MonitorDeviceState, _ key: MonitorDeviceKey, _ filter: SimMonitor.RSSIFilter, rssi: Int,
        at now: SimInstant
    ) -> AdapterEvent? {
        let seconds = now.nanoseconds / 1_000_000_000
        state.lostAt = nil
        // Offline for longer than a timeout: that timing starts again.
        if let last = state.lastSeen {
            if seconds - last > Int64(filter.highTimeout) { state.highFirstSeen = nil }
            if seconds - last > Int64(filter.lowTimeout) { state.lowFirstSeen = nil }
        }
        state.lastSeen = seconds
        var event: AdapterEvent?
        if !state.found && rssi > filter.high {
            if held(since: &state.highFirstSeen, at: seconds, for: filter.highTimeout) {
                state.found = true
                event = .monitorDeviceFound(owner: key.owner, monitor: key.monitor, device: key.device)
            }
        } else {
            state.highFirstSeen = nil
        }
        if state.found && rssi < filter.low {
            if held(since: &state.lowFirstSeen, at: seconds, for: filter.lowTimeout) {
                state.found = false
                event = .monitorDeviceLost(owner: key.owner, monitor: key.monitor, device: key.device)
            }
        } else {
            state.lowFirstSeen = nil
        }
        if state.found { state.lostAt = now.advanced(bySeconds: Double(filter.lowTimeout)) }
        return event
    }

    /// Whether a condition that holds at `seconds` has held for `timeout` seconds since `first`; the first time it
    /// holds, `first` is set and the answer is no.
    private static func held(since first: inout Int64?, at seconds: Int64, for timeout: Int) -> Bool {
        guard let start = first else {
            first = seconds
            return false
        }
        return seconds - start >= Int64(timeout)
    }

    /// The DeviceLost calls of found devices unheard for their monitor's low timeout by `now`.
    mutating func expireMonitorDevices(at now: SimInstant) -> [AdapterEvent] {
        var events: [AdapterEvent] = []
        for key in monitorLostTimers.popDue(at: now, deadline: { monitorDevices[$0]?.lostAt }) {
            guard monitorDevices[key]?.found == true else { continue }
            monitorDevices[key]?.found = false
            monitorDevices[key]?.lostAt = nil
            events.append(.monitorDeviceLost(owner: key.owner, monitor: key.monitor, device: key.device))
        }
        return events
    }

    /// Drops what monitors know of the devices for which `forget` holds (with their lost timers), without
    /// DeviceLost, as bluetoothd when a monitor goes (it looks at every device the monitors know).
    mutating func forgetMonitorDevices(where forget: (MonitorDeviceKey) -> Bool) {
        guard !monitorDevices.isEmpty else { return }
        for key in monitorDevices.keys where forget(key) { drop(key) }
    }

    /// Drops what each monitor knows of `device`, without DeviceLost, as bluetoothd when the device object
    /// goes: one lookup per monitor, however many devices the monitors know.
    mutating func forgetMonitorDevices(of device: DeviceAddress) {
        guard !monitorDevices.isEmpty else { return }
        for monitor in monitors where monitor.rssi != nil {
            drop(MonitorDeviceKey(owner: monitor.owner, monitor: monitor.path, device: device))
        }
    }

    private mutating func drop(_ key: MonitorDeviceKey) {
        monitorDevices[key] = nil
        monitorLostTimers.cancel(key)
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
