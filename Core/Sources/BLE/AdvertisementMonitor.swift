import GATT
import Synchronization

/// A passive scan's wish: the advertisements to hear, as an `or_patterns` advertisement monitor
/// (BlueZ's `org.bluez.AdvertisementMonitor1`). Set it as ``ScanOptions/monitor``.
///
/// With a monitor, bluetoothd makes the controller scan passively (no scan requests, so no
/// scan response data) while the monitor is registered, and creates or updates the Device1 of
/// each matching advertiser without a discovery session; the scan reports those devices. An
/// adapter without `org.bluez.AdvertisementMonitorManager1` (bluetoothd 5.66 serves it only
/// with experimental features, `-E`), without the `or_patterns` type, or one that refuses or
/// releases the monitor, gets the usual active discovery instead: ``DiscoveryStream/mode`` says
/// which runs and why.
public struct AdvertisementMonitor: Hashable, Sendable {
    /// RSSI thresholds of a monitor (`RSSIHighThreshold`, `RSSIHighTimeout`, `RSSILowThreshold`,
    /// `RSSILowTimeout`, `RSSISamplingPeriod`); bluetoothd 5.66 (`adv_monitor_filter_rssi`) then reports a
    /// device found once its RSSI stays above `high` for `highTimeout` seconds, and lost once it stays below
    /// `low`, or goes unheard, for `lowTimeout` seconds.
    public struct RSSIThresholds: Hashable, Sendable {
        /// dBm, -127...20.
        public var high: Int
        /// Seconds, 1...300.
        public var highTimeout: Int
        /// dBm, -127...20, at most `high`.
        public var low: Int
        /// Seconds, 1...300.
        public var lowTimeout: Int
        /// Units of 100 ms: 0 reports every advertisement, 1...254 one per period, 255 only the first.
        public var samplingPeriod: Int

        /// Thresholds.
        public init(high: Int, highTimeout: Int = 1, low: Int, lowTimeout: Int = 5, samplingPeriod: Int = 0) {
            self.high = high
            self.highTimeout = highTimeout
            self.low = low
            self.lowTimeout = lowTimeout
            self.samplingPeriod = samplingPeriod
        }
    }

    /// The patterns; an advertisement matching any of them is heard. At least one.
    public var patterns: [AdvertisementPattern]
    /// RSSI thresholds; nil for none (every matching advertisement is reported).
    public var rssiThresholds: RSSIThresholds?

    /// A monitor of `patterns`.
    public init(patterns: [AdvertisementPattern], rssiThresholds: RSSIThresholds? = nil) {
        self.patterns = patterns
        self.rssiThresholds = rssiThresholds
    }
}

/// How a scan runs (``DiscoveryStream/mode``).
public enum ScanMode: Hashable, Sendable, CustomStringConvertible {
    /// Active discovery (Adapter1.StartDiscovery): the scan asked for no monitor.
    case active
    /// The scan's advertisement monitor is being registered; nothing is discovered for it yet.
    case passivePending
    /// Passive: bluetoothd activated the scan's advertisement monitor.
    case passive
    /// The scan asked for a monitor but runs active discovery, for `reason` (no monitor manager on
    /// the adapter, no `or_patterns`, registration refused, or the monitor released).
    case fallback(reason: String)

    /// Whether the adapter scans passively for this scan (or is about to).
    public var isPassive: Bool {
        switch self {
        case .passive, .passivePending: true
        case .active, .fallback: false
        }
    }

    /// `active`, `passive (pending)`, `passive` or `active (fallback: reason)`.
    public var description: String {
        switch self {
        case .active: "active"
        case .passivePending: "passive (pending)"
        case .passive: "passive"
        case .fallback(let reason): "active (fallback: \(reason))"
        }
    }
}

/// What bluetoothd calls on a registered advertisement monitor (all `[noreply]`).
public enum MonitorEvent: Hashable, Sendable {
    /// `Activate`: the monitor is in effect.
    case activated
    /// `Release`: bluetoothd gave the monitor up (before or after activating it).
    case released
    /// `DeviceFound(device)`: an advertisement of the device at this path matched.
    case deviceFound(String)
    /// `DeviceLost(device)`: the device went below the RSSI thresholds (only with thresholds).
    case deviceLost(String)
}

/// A scan's mode, shared by the manager (which changes it) and the scan's stream (which reads it).
final class ScanModeCell: Sendable {
    private let mode: Mutex<ScanMode>
    private let changes = Broadcast<ScanMode>(capacity: 8)

    init(_ initial: ScanMode) { mode = Mutex(initial) }

    var value: ScanMode { mode.withLock { $0 } }

    /// Sets the mode; returns whether it changed.
    @discardableResult
    func set(_ new: ScanMode) -> Bool {
        let changed = mode.withLock { current in
            guard current != new else { return false }
            current = new
            return true
        }
        if changed { changes.yield(new) }
        return changed
    }

    /// The mode now and every change after.
    func updates() -> AsyncStream<ScanMode> { changes.stream(current: { self.value }) }
}
