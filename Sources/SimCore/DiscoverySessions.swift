import GATT

/// How blesim applies a client's RSSI and Pathloss thresholds after the merged scan filter.
public enum ProximityRule: Sendable, Equatable {
    /// As bluetoothd 5.66 does (`is_filter_match`): once a client's UUIDs match, its proximity
    /// check passes whenever Pathloss is unset, so RSSI thresholds act only through the merged
    /// scan filter (the lowest threshold of all clients) and Pathloss never filters.
    case bluez566
    /// As adapter-api.txt documents: a client matches only if the RSSI reaches its threshold,
    /// or the advertised TX power minus the RSSI is within its Pathloss.
    case documented
}

/// The discovery sessions of one adapter: which clients (by unique bus name) discover, with
/// which filters, and what that means for each advertising report (bluetoothd 5.66 semantics).
public struct DiscoverySessions: Sendable, Equatable {
    /// A client with a session or a pre-set filter.
    public struct Client: Sendable, Equatable {
        /// Its unique bus name, for example `:1.42`.
        public var owner: String
        /// Its filter, if it set one.
        public var filter: DiscoveryFilter?
    }

    /// Clients discovering, most recent first.
    public private(set) var discovering: [Client] = []
    /// Clients that set a filter but do not discover (yet, or any more).
    public private(set) var preset: [Client] = []
    /// The transports of this adapter, which "auto" means.
    public let adapterTransport: ScanTypes
    /// How RSSI and Pathloss thresholds are applied per client.
    public var proximityRule: ProximityRule

    /// No sessions, on an adapter scanning `adapterTransport`.
    public init(adapterTransport: ScanTypes = .dual, proximityRule: ProximityRule = .bluez566) {
        self.adapterTransport = adapterTransport
        self.proximityRule = proximityRule
    }

    /// Whether any client discovers.
    public var isActive: Bool { !discovering.isEmpty }

    /// The merged scan filter; nil for a regular (unfiltered) discovery.
    public var scanFilter: ScanFilter? {
        ScanFilter.merge(discovering.map(\.filter), adapterTransport: adapterTransport)
    }

    /// Whether the running discovery is filtered: then every RSSI change is reported and devices
    /// are reported whatever their discoverable flags.
    public var isFiltered: Bool { scanFilter != nil }

    /// Whether a discovering client asked for DuplicateData.
    public var wantsDuplicateData: Bool { discovering.contains { $0.filter?.duplicateData == true } }

    /// Whether a discovering client asked the adapter to be discoverable meanwhile.
    public var wantsDiscoverable: Bool { discovering.contains { $0.filter?.discoverable == true } }

    /// Every bus name that holds a session or a pre-set filter (the names to watch).
    public var owners: Set<String> { Set(discovering.map(\.owner) + preset.map(\.owner)) }

    /// `StartDiscovery` from `owner`: `InProgress` if it already discovers. Returns whether
    /// discovery went from idle to active.
    public mutating func start(owner: String) throws(BlueZError) -> Bool {
        guard !discovering.contains(where: { $0.owner == owner }) else { throw BluetoothdError.inProgress }
        let wasActive = isActive
        if let index = preset.firstIndex(where: { $0.owner == owner }) {
            discovering.insert(preset.remove(at: index), at: 0)
        } else {
            discovering.insert(Client(owner: owner, filter: nil), at: 0)
        }
        return !wasActive
    }

    /// `StopDiscovery` from `owner`: `Failed "No discovery started"` if it does not discover.
    /// Its filter stays set for a later StartDiscovery. Returns whether discovery stopped.
    public mutating func stop(owner: String) throws(BlueZError) -> Bool {
        guard let index = discovering.firstIndex(where: { $0.owner == owner }) else {
            throw BluetoothdError.failed("No discovery started")
        }
        let client = discovering.remove(at: index)
        if client.filter != nil { preset.insert(client, at: 0) }
        return !isActive
    }

    /// `SetDiscoveryFilter` from `owner` (nil removes its filter), already parsed.
    public mutating func setFilter(_ filter: DiscoveryFilter?, owner: String) {
        if let index = discovering.firstIndex(where: { $0.owner == owner }) {
            discovering[index].filter = filter
        } else if let index = preset.firstIndex(where: { $0.owner == owner }) {
            if let filter { preset[index].filter = filter } else { preset.remove(at: index) }
        } else if let filter {
            preset.insert(Client(owner: owner, filter: filter), at: 0)
        }
    }

    /// `owner` left the bus: its session and filter go. Returns whether discovery stopped.
    public mutating func remove(owner: String) -> Bool {
        let wasActive = isActive
        discovering.removeAll { $0.owner == owner }
        preset.removeAll { $0.owner == owner }
        return wasActive && !isActive
    }

    /// The adapter powered off: every session and filter goes.
    public mutating func removeAll() {
        discovering = []
        preset = []
    }

    /// Whether `report` may create a device object (bluetoothd's `device_is_discoverable`):
    /// in a filtered discovery any device may; otherwise only one whose flags say discoverable.
    /// A client's Pattern overrides both: then only a device whose address or advertised name
    /// starts with some client's pattern may (an empty pattern admits every device).
    public func admits(_ report: AdvertisingReport) -> Bool {
        var admitted = isFiltered || report.advertisement.isDiscoverable
        let address = report.address.description
        for client in discovering {
            guard let pattern = client.filter?.pattern else { continue }
            admitted = false
            if pattern.isEmpty || address.hasPrefix(pattern) { return true }
            if let name = report.advertisement.name, name.hasPrefix(pattern) { return true }
        }
        return admitted
    }

    /// Whether `report` is reported at all: it passes the merged scan filter, is admitted, and
    /// (in a filtered discovery) matches some client's filter.
    public func reports(_ report: AdvertisingReport) -> Bool {
        guard isActive else { return false }
        guard let scanFilter else { return admits(report) }
        return scanFilter.passes(report) && admits(report) && matchesSomeClient(report)
    }

    private func matchesSomeClient(_ report: AdvertisingReport) -> Bool {
        discovering.contains { client in
            guard let filter = client.filter else { return true }
            let uuidMatch =
                filter.uuids.isEmpty || filter.uuids.contains(where: report.advertisement.serviceUUIDs.contains)
            return uuidMatch && proximityMatches(filter, report)
        }
    }

    private func proximityMatches(_ filter: DiscoveryFilter, _ report: AdvertisingReport) -> Bool {
        switch proximityRule {
        case .bluez566:
            if filter.rssi == nil || filter.pathloss == nil { return true }
        case .documented:
            if filter.rssi == nil, filter.pathloss == nil { return true }
        }
        if let rssi = filter.rssi, rssi <= report.rssi { return true }
        if let pathloss = filter.pathloss, let tx = report.advertisement.txPower {
            return Int(tx) - Int(report.rssi) <= Int(pathloss)
        }
        return false
    }
}
