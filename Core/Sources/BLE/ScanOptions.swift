import GATT

/// How a scan filters and reports discoveries
/// (`scanForPeripherals(withServices:options:)`).
public struct ScanOptions: Hashable, Sendable {
    /// Report every advertisement, not only the first of each peripheral and
    /// those whose advertisement data changed.
    public var allowDuplicates: Bool
    /// Drop discoveries weaker than this RSSI (dBm).
    public var rssiThreshold: Int?
    /// Keep only peripherals whose name or address starts with this text
    /// (BlueZ's discovery filter `Pattern`).
    public var namePattern: String?
    /// Scan passively through this advertisement monitor, where the adapter offers one (see
    /// ``AdvertisementMonitor``); nil for active discovery. A passive scan reports only the devices
    /// bluetoothd found with the monitor (`DeviceFound`), and still passes this filter.
    public var monitor: AdvertisementMonitor?

    /// Options; by default no duplicates, no threshold, no pattern, active.
    public init(
        allowDuplicates: Bool = false, rssiThreshold: Int? = nil, namePattern: String? = nil,
        monitor: AdvertisementMonitor? = nil
    ) {
        self.allowDuplicates = allowDuplicates
        self.rssiThreshold = rssiThreshold
        self.namePattern = namePattern
        self.monitor = monitor
    }
}

/// One scanner's wishes: the services it looks for and its options.
public struct ScanFilter: Hashable, Sendable {
    /// Peripherals advertising at least one of these services; nil for all.
    public var services: [BluetoothUUID]?
    /// The scan options.
    public var options: ScanOptions

    /// A filter for `services` (nil: all) with `options`.
    public init(services: [BluetoothUUID]? = nil, options: ScanOptions = ScanOptions()) {
        self.services = services
        self.options = options
    }

    /// Whether a discovery passes this scanner's own filter (the merged
    /// BlueZ filter is looser, so each scanner filters again).
    public func matches(address: String, rssi: Int?, advertisement: AdvertisementData) -> Bool {
        if let services, !services.isEmpty,
            Set(services).isDisjoint(with: advertisement.serviceUUIDs)
                && Set(services).isDisjoint(with: advertisement.serviceData.keys)
        {
            return false
        }
        if let threshold = options.rssiThreshold {
            guard let rssi, rssi >= threshold else { return false }
        }
        if let pattern = options.namePattern, !pattern.isEmpty {
            let nameMatches = advertisement.localName?.hasPrefix(pattern) ?? false
            if !nameMatches && !address.uppercased().hasPrefix(pattern.uppercased()) { return false }
        }
        return true
    }
}

/// The discovery filter sent to BlueZ (Adapter1.SetDiscoveryFilter): the
/// loosest filter that lets every scanner's discoveries through.
public struct DiscoveryFilter: Hashable, Sendable {
    /// `UUIDs`; empty for no UUID filter.
    public var uuids: [BluetoothUUID]
    /// `RSSI`; nil for none.
    public var rssi: Int?
    /// `DuplicateData`: report every advertisement.
    public var duplicateData: Bool
    /// `Pattern`; nil for none.
    public var pattern: String?
    /// `Transport`: always `"le"`.
    public var transport: String { "le" }

    /// A filter with the given fields.
    public init(uuids: [BluetoothUUID] = [], rssi: Int? = nil, duplicateData: Bool = false, pattern: String? = nil) {
        self.uuids = uuids
        self.rssi = rssi
        self.duplicateData = duplicateData
        self.pattern = pattern
    }

    /// The merge of `filters`: UUIDs united (none if any scanner wants all),
    /// the weakest RSSI threshold (none if any has none), duplicates if any
    /// wants them, the pattern only if all share it.
    public init(merging filters: [ScanFilter]) {
        self.init()
        guard !filters.isEmpty else { return }
        if filters.allSatisfy({ !($0.services ?? []).isEmpty }) {
            var seen = Set<BluetoothUUID>()
            uuids = filters.flatMap { $0.services ?? [] }.filter { seen.insert($0).inserted }.sorted()
        }
        let thresholds = filters.map(\.options.rssiThreshold)
        if thresholds.allSatisfy({ $0 != nil }) { rssi = thresholds.compactMap { $0 }.min() }
        duplicateData = filters.contains { $0.options.allowDuplicates }
        let patterns = Set(filters.map(\.options.namePattern))
        if patterns.count == 1, let only = patterns.first { pattern = only }
    }
}
