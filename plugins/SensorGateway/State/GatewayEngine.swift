import BLE
import BTHomeCrypto

/// One advertisement report as the gateway takes it from the scan.
public struct GatewayReport: Sendable {
    /// The sender.
    public var address: DeviceAddress
    /// The RSSI, dBm; nil when unknown (HCI's 127, "not available", is nil too).
    public var rssi: Int?
    /// What it advertised.
    public var advertisement: AdvertisementData
    /// How many reports this one stands for (more than 1 when the central
    /// coalesced a device's reports while the gateway was busy).
    public var reportCount: Int

    /// A report.
    public init(address: DeviceAddress, rssi: Int?, advertisement: AdvertisementData, reportCount: Int = 1) {
        self.address = address
        self.rssi = Discovery.measuredRSSI(rssi)
        self.advertisement = advertisement
        self.reportCount = max(1, reportCount)
    }
}

/// The readings of one device that changed since its last update: what
/// leaves the gateway through its ``ReadingSink``s.
public struct ReadingUpdate: Sendable {
    /// The device.
    public var address: DeviceAddress
    /// Its name.
    public var name: String?
    /// Its kind.
    public var kind: DeviceKind
    /// Its smoothed RSSI, rounded.
    public var rssi: Int?
    /// The readings that changed, by kind and name.
    public var readings: [StoredReading]
    /// Every sensor and binary sensor reading the device holds now (changed
    /// or not), by kind and name: its whole state, for hand-offs that keep one.
    public var states: [StoredReading]
    /// Its BTHome firmware version, when it sends one.
    public var firmware: String?
    /// When the update was made (the engine's clock).
    public var at: Duration

    /// An update.
    public init(
        address: DeviceAddress, name: String?, kind: DeviceKind, rssi: Int?, readings: [StoredReading],
        states: [StoredReading], firmware: String?, at: Duration
    ) {
        self.address = address
        self.name = name
        self.kind = kind
        self.rssi = rssi
        self.readings = readings
        self.states = states
        self.firmware = firmware
        self.at = at
    }
}

/// The gateway's one owner of state, pure: reports in, readings and updates
/// out, time as an input (any monotonic origin) so tests drive it exactly.
///
/// Per report it does work proportional to the report (a dictionary lookup,
/// one decode, the readings it carries), never to the number of devices.
public struct GatewayEngine: Sendable {
    /// The settings.
    public let config: GatewayConfig
    /// The devices.
    public private(set) var table: DeviceTable
    /// The counters.
    public private(set) var stats = GatewayStats()
    private let keys: [DeviceAddress: BTHomeBindKey]
    private var pending = PendingUpdates()
    private var departures: [DeviceAddress] = []
    private var tokens: Double
    private var tokensAt: Duration = .zero

    /// Within this time a BTHome packet id that did not move forward (by 1 to
    /// 63, modulo 256) is a repeat; after it, any id is new (Home Assistant's rule).
    public static let packetIDWindow: Duration = .seconds(4)
    /// An encryption counter this low may follow a higher one (the device restarted).
    public static let counterRestartLimit: UInt32 = 100

    /// An engine with `config` and the bind keys by address.
    public init(config: GatewayConfig, keys: [DeviceAddress: BTHomeBindKey] = [:]) {
        self.config = config
        self.keys = keys
        table = DeviceTable(capacity: config.maxDevices)
        tokens = Double(config.eventsPerSecond)
    }

    /// How many bind keys it holds.
    public var keyCount: Int { keys.count }

    /// Takes one report heard at `now`; returns the update to hand off now, if any.
    public mutating func ingest(_ report: GatewayReport, at now: Duration) -> ReadingUpdate? {
        stats.reportsIn += report.reportCount
        stats.discoveries += 1
        guard config.admits(report.address, report.advertisement) else {
            stats.filtered += report.reportCount
            return nil
        }
        let format = AdvertisementFormat(report.advertisement)
        guard format != nil || config.trackUnknown else {
            stats.unknownFormat += report.reportCount
            return nil
        }
        let key = keys[report.address]
        let smoothing = config.rssiSmoothing
        let maxReadings = config.maxReadingsPerDevice
        let (outcome, evicted) = table.update(
            report.address, make: { DeviceEntry(address: report.address, kind: format?.kind ?? .unknown, at: now) }
        ) { entry -> Outcome in
            entry.lastSeen = now
            entry.reports += report.reportCount
            if let name = report.advertisement.localName { entry.name = name }
            if let rssi = report.rssi {
                entry.lastRSSI = rssi
                entry.rssi = entry.rssi.map { $0 + smoothing * (Double(rssi) - $0) } ?? Double(rssi)
            }
            guard let format else { return .unknownFormat }
            return Self.decode(format, key: key, into: &entry, at: now, maxReadings: maxReadings)
        }
        if let evicted {
            stats.devicesEvicted += 1
            departures.append(evicted.address)
        }
        switch outcome {
        case .unknownFormat:
            stats.unknownFormat += report.reportCount
            return nil
        case .duplicate:
            stats.duplicatesDropped += 1
            return nil
        case .failed(let failure):
            stats.decodeErrors[failure.reason, default: 0] += 1
            return nil
        case .decoded(let problems, let dropped, let changed):
            stats.decoded += 1
            stats.readingsDropped += dropped
            for problem in problems { stats.decodeErrors[problem.reason, default: 0] += 1 }
            return changed ? changedReadings(of: report.address, at: now) : nil
        }
    }

    /// Expires devices unheard for ``GatewayConfig/expirySeconds`` and
    /// returns the updates whose rate limit has passed.
    public mutating func tick(at now: Duration) -> [ReadingUpdate] {
        let expiry = Duration.milliseconds(Int64(config.expirySeconds * 1000))
        if now > expiry {
            let expired = table.removeHeard(before: now - expiry)
            stats.devicesExpired += expired.count
            departures += expired.map(\.address)
        }
        var updates: [ReadingUpdate] = []
        while let next = pending.nextDue, next <= now, takeToken(at: now), let entry = pending.popDue(at: now) {
            let update = table.modify(entry.address) { device -> ReadingUpdate? in
                guard device.pendingDue == entry.due else { return nil }
                device.pendingDue = nil
                return Self.makeUpdate(&device, at: now)
            }
            if let update = update ?? nil {
                stats.updatesPublished += 1
                updates.append(update)
            } else {
                tokens += 1
            }
        }
        return updates
    }

    /// The devices evicted or expired since the last call, taken: the
    /// hand-offs say they are gone. Call it after each ``ingest(_:at:)`` and
    /// ``tick(at:)``, so it holds no more than those removed.
    public mutating func takeDepartures() -> [DeviceAddress] {
        defer { departures.removeAll(keepingCapacity: true) }
        return departures
    }

    /// When ``tick(at:)`` next has something to do: the next update due or
    /// the next expiry.
    public var nextDeadline: Duration? {
        let expiry = table.leastRecent.map { $0.lastSeen + .milliseconds(Int64(config.expirySeconds * 1000)) }
        return [pending.nextDue, expiry].compactMap { $0 }.min()
    }

    private enum Outcome {
        case unknownFormat
        case duplicate
        case failed(DecodeFailure)
        case decoded(problems: [DecodeFailure], dropped: Int, changed: Bool)
    }

    private static func decode(
        _ format: AdvertisementFormat, key: BTHomeBindKey?, into entry: inout DeviceEntry, at now: Duration,
        maxReadings: Int
    ) -> Outcome {
        if case .bthome(let data, _) = format, key != nil, let counter = BTHomeDecoder.encryptionCounter(data),
            let last = entry.counter
        {
            // Checked before decrypting: a repeat costs no AES.
            if counter == last {
                entry.duplicates += 1
                return .duplicate
            }
            if counter < last && counter >= counterRestartLimit {
                record(.bthomeCounterReplayed, in: &entry, at: now)
                return .failed(.bthomeCounterReplayed)
            }
        }
        let decoded: DecodedAdvertisement
        do {
            decoded = try AdvertisementDecoder.decode(format, address: entry.address.bytes, key: key)
        } catch {
            record(error, in: &entry, at: now)
            return .failed(error)
        }
        if let id = decoded.packetID, let last = entry.packet, now - last.at <= packetIDWindow {
            let step = id &- last.id
            if step == 0 || step >= 64 {
                entry.duplicates += 1
                return .duplicate
            }
        }
        entry.decoded += 1
        entry.kind = decoded.kind
        entry.encrypted = decoded.encrypted
        if let id = decoded.packetID { entry.packet = (id, now) }
        if let counter = decoded.counter { entry.counter = counter }
        if let firmware = decoded.firmware { entry.firmware = firmware }
        if let type = decoded.deviceTypeID { entry.deviceTypeID = type }
        for problem in decoded.problems { record(problem, in: &entry, at: now) }
        var dropped = 0
        var changed = false
        for reading in decoded.readings {
            let key = reading.key
            if let stored = entry.readings[key] {
                if stored.reading != reading || reading.kind == .event {
                    entry.changed.insert(key)
                    changed = true
                }
            } else if entry.readings.count < maxReadings {
                entry.changed.insert(key)
                changed = true
            } else {
                dropped += 1
                continue
            }
            entry.readings[key] = StoredReading(reading: reading, at: now)
        }
        return .decoded(problems: decoded.problems, dropped: dropped, changed: changed)
    }

    private static func record(_ failure: DecodeFailure, in entry: inout DeviceEntry, at now: Duration) {
        entry.errors[failure.reason, default: 0] += 1
        entry.lastError = (failure, now)
    }

    /// The update for a device whose readings just changed: now, when its
    /// rate limit and the global one allow, else later (coalesced).
    private mutating func changedReadings(of address: DeviceAddress, at now: Duration) -> ReadingUpdate? {
        guard config.eventIntervalSeconds > 0 else { return nil }
        let interval = Duration.milliseconds(Int64(config.eventIntervalSeconds * 1000))
        let (due, wasPending) =
            table.modify(address) { device in
                (device.lastEventAt.map { $0 + interval } ?? now, device.pendingDue != nil)
            } ?? (now, true)
        if wasPending {
            stats.updatesCoalesced += 1
            return nil
        }
        if due <= now, takeToken(at: now) {
            stats.updatesPublished += 1
            return table.modify(address) { Self.makeUpdate(&$0, at: now) }
        }
        stats.updatesCoalesced += 1
        let waitUntil = max(due, now)
        table.modify(address) { $0.pendingDue = waitUntil }
        pending.push(.init(due: waitUntil, address: address))
        if pending.count > 2 * table.capacity {
            let table = self.table
            pending.compact { table.entry($0.address)?.pendingDue == $0.due }
        }
        return nil
    }

    private static func makeUpdate(_ device: inout DeviceEntry, at now: Duration) -> ReadingUpdate {
        let readings = device.changed.sorted().compactMap { device.readings[$0] }
        device.changed.removeAll(keepingCapacity: true)
        device.lastEventAt = now
        let states = device.readings.keys.filter { $0.kind != .event }.sorted().compactMap { device.readings[$0] }
        return ReadingUpdate(
            address: device.address, name: device.name, kind: device.kind,
            rssi: device.rssi.map { Int($0.rounded()) }, readings: readings, states: states,
            firmware: device.firmware, at: now)
    }

    private mutating func takeToken(at now: Duration) -> Bool {
        let rate = Double(config.eventsPerSecond)
        let elapsed =
            Double((now - tokensAt).components.seconds) + Double((now - tokensAt).components.attoseconds) / 1e18
        tokens = min(rate, tokens + max(0, elapsed) * rate)
        tokensAt = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
