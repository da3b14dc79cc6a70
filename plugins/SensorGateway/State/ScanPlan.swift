import BLE
import GATT

/// The config's `scan` field: how the gateway wants to scan.
public enum ScanSetting: String, Sendable, Hashable, CaseIterable {
    /// Passive where the adapter offers an advertisement monitor and the config does not need
    /// active scanning; active otherwise.
    case auto
    /// Passive through an advertisement monitor (active only when the adapter offers none).
    case passive
    /// Active discovery, as without a monitor.
    case active
}

/// What the gateway asks the central for: an advertisement monitor of the formats it decodes,
/// or active discovery, and why. A pure function of the config.
public struct ScanPlan: Sendable, Hashable {
    /// The monitor to scan passively with; nil for active discovery.
    public var monitor: AdvertisementMonitor?
    /// Why the plan is what it is, for the log and `gateway.stats`.
    public var reason: String

    /// The patterns of every format the gateway decodes: BTHome service data (0xFCD2, the sensor
    /// aggregator's included), Eddystone service data (0xFEAA) and iBeacon manufacturer data
    /// (0x004C, `02 15`).
    public static let decoderPatterns: [AdvertisementPattern] = {
        do {
            return [
                try .serviceData16(0xFCD2), try .serviceData16(0xFEAA),
                try .manufacturerData(0x004C, prefix: [0x02, 0x15]),
            ]
        } catch {
            fatalError("the decoders' patterns are valid: \(error)")
        }
    }()

    /// Why `config` needs active scanning (every advertisement, or scan response data), or nil.
    public static func activeNeed(of config: GatewayConfig) -> (field: String, reason: String)? {
        if config.trackUnknown {
            return ("trackUnknown", "trackUnknown keeps devices no decoder reads, which no monitor pattern matches")
        }
        for (field, filter) in [("allow", config.allow), ("deny", config.deny)] {
            if let filter, !filter.namePrefixes.isEmpty {
                return (
                    "\(field).namePrefixes",
                    "name-prefix rules need the names devices send in scan responses, which passive scanning never asks for"
                )
            }
        }
        return nil
    }

    /// The plan for `config`.
    public init(config: GatewayConfig) {
        switch config.scan {
        case .active:
            monitor = nil
            reason = "config scan is active"
        case .auto, .passive:
            if let need = Self.activeNeed(of: config) {
                monitor = nil
                reason = need.reason
            } else {
                monitor = AdvertisementMonitor(patterns: Self.decoderPatterns)
                reason = "config scan is \(config.scan.rawValue): BTHome, Eddystone and iBeacon patterns"
            }
        }
    }
}

/// How the gateway's scan runs and why: `gateway.stats` `scan`.
public struct ScanStatus: Sendable, Hashable {
    /// `passive`, `pending` (the monitor is being registered), `active` or `starting`.
    public var mode: String
    /// Why: the plan's reason, or the central's reason for falling back to active scanning.
    public var reason: String

    /// A status.
    public init(mode: String, reason: String) {
        self.mode = mode
        self.reason = reason
    }

    /// The status of a scan in `mode` that asked for `plan`.
    public init(_ mode: ScanMode, plan: ScanPlan) {
        switch mode {
        case .active: self.init(mode: "active", reason: plan.reason)
        case .passivePending: self.init(mode: "pending", reason: "registering the advertisement monitor")
        case .passive: self.init(mode: "passive", reason: "bluetoothd activated the advertisement monitor")
        case .fallback(let reason): self.init(mode: "active", reason: "fallback: \(reason)")
        }
    }
}
