import GATT

/// The one filter the controller scans with, merged from every discovering client's filter the
/// way bluetoothd 5.66 merges them for the kernel (`merge_discovery_filters`).
///
/// - Transport: the union of the clients' transports.
/// - RSSI: the lowest of the clients' thresholds; none if any filtered client has no RSSI
///   threshold (a Pathloss client counts as one without: the kernel cannot compute pathloss).
/// - UUIDs: the sorted union; empty (any device) if any filtered client has no UUIDs.
/// - A client discovering without a filter beside filtered ones resets it to everything (the
///   adapter's transports, no RSSI, no UUIDs), but the discovery still counts as filtered.
public struct ScanFilter: Sendable, Equatable {
    /// Transports scanned.
    public var transport: ScanTypes
    /// Reports below this RSSI are dropped.
    public var rssi: Int16?
    /// Reports advertising none of these UUIDs are dropped; empty drops none.
    public var uuids: [BluetoothUUID]

    /// A merged filter.
    public init(transport: ScanTypes, rssi: Int16?, uuids: [BluetoothUUID]) {
        self.transport = transport
        self.rssi = rssi
        self.uuids = uuids
    }

    /// The merged filter of `filters` (one per discovering client, nil for a client without a
    /// filter), or nil when no client has a filter: a regular, unfiltered discovery.
    public static func merge(_ filters: [DiscoveryFilter?], adapterTransport: ScanTypes) -> ScanFilter? {
        let filtered = filters.compactMap { $0 }
        guard !filtered.isEmpty else { return nil }
        if filtered.count < filters.count {
            return ScanFilter(transport: adapterTransport, rssi: nil, uuids: [])
        }
        var transport: ScanTypes = []
        var rssi: Int16? = nil
        var anyWithoutRSSI = false
        var anyWithoutUUIDs = false
        var uuids = Set<BluetoothUUID>()
        for filter in filtered {
            transport.formUnion(filter.transport)
            if let threshold = filter.rssi {
                rssi = min(rssi ?? threshold, threshold)
            } else {
                anyWithoutRSSI = true
            }
            if filter.uuids.isEmpty { anyWithoutUUIDs = true }
            uuids.formUnion(filter.uuids)
        }
        return ScanFilter(
            transport: transport, rssi: anyWithoutRSSI ? nil : rssi,
            uuids: anyWithoutUUIDs ? [] : uuids.sorted())
    }

    /// Whether the controller passes `report` up (an LE report: the simulated air is LE only).
    public func passes(_ report: AdvertisingReport) -> Bool {
        guard transport.contains(.le) else { return false }
        if let rssi, report.rssi < rssi { return false }
        if !uuids.isEmpty, !report.advertisement.serviceUUIDs.contains(where: uuids.contains) { return false }
        return true
    }
}
