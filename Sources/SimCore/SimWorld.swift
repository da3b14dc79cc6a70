import GATT
import VirtualPaymentTerminal

/// The whole simulation, pure and deterministic: adapters, virtual devices, and the air between
/// them. The shell tells it the time and forwards clients' requests; it answers with events.
public struct SimWorld: Sendable {
    /// The adapters, hci0 first.
    public internal(set) var adapters: [SimAdapter]
    /// The virtual devices.
    public internal(set) var devices: [VirtualDevice]
    /// Each virtual device's GATT server, by device index (devices with a database).
    public internal(set) var servers: [Int: GATTServer] = [:]
    /// The virtual payment terminals' logic, by device index.
    var terminals: [Int: VirtualTerminal] = [:]
    /// Links (and their client-side GATT state) by adapter index and device address.
    public internal(set) var links: [LinkKey: GATTLink] = [:]
    /// Injected faults.
    public var faults = FaultPlan()
    /// Connect timings and MTU from the scenario.
    public let connectFailSeconds: Double
    /// Seconds a successful Connect takes.
    public let connectSeconds: Double
    /// The MTU of every link.
    public let mtu: UInt16
    /// Seconds before an unanswered ATT request times out and drops its link.
    public let attTimeout: Double
    /// Whether adapters keep advertising while a central is connected (``Scenario/advertiseWhileConnected``).
    public let advertiseWhileConnected: Bool
    /// The link model, when the scenario or the command line turns it on.
    public let linkModel: LinkModel?
    /// The scenario's scheduled faults.
    public internal(set) var schedule: FaultSchedule
    /// The time of the last `advance(to:)`: the world's now for work that has no time of its own.
    public internal(set) var clock: SimInstant
    /// Devices that are silenced (for fault injection): they do not advertise.
    public var silenced: Set<Int> = []

    /// Each adapter's peripheral role (its applications and advertisement), by adapter index.
    public internal(set) var localPeripherals: [Int: LocalPeripheral] = [:]
    /// blesim's virtual central.
    public internal(set) var virtualCentral = VirtualCentral()
    /// Indications of local applications under the link model, by bearer (one outstanding each).
    var indicationQueues: [String: IndicationQueue] = [:]
    /// Devices not on the air now (an adapter's peripheral without an advertisement).
    public internal(set) var offAir: Set<Int> = []

    var air: AirSchedule
    private var noise: SeededGenerator
    /// The advertisement of each sensor device for its current measurement, by device index.
    private var sensorAdvertisements: [Int: (measurement: Int64, advertisement: Advertisement)] = [:]
    /// When the world started: sensors measure from here.
    private let start: SimInstant

    /// A world built from `scenario`, starting at `start`.
    /// `experimental` serves the properties `bluetoothd -E` adds.
    public init(
        scenario: Scenario, start: SimInstant = .zero, proximityRule: ProximityRule = .bluez566,
        experimental: Bool = false
    ) {
        adapters = scenario.adapters.enumerated().map { index, spec in
            SimAdapter(
                index: index, spec: spec, temporaryTimeout: scenario.temporaryTimeout, proximityRule: proximityRule,
                experimental: experimental)
        }
        devices = scenario.devices
        air = AirSchedule(
            intervalsMilliseconds: scenario.devices.map(\.intervalMilliseconds), start: start, seed: scenario.seed)
        noise = SeededGenerator(seed: scenario.seed ^ 0x5EED_0F_A1)
        connectFailSeconds = scenario.connectFailSeconds
        connectSeconds = scenario.connectSeconds
        mtu = scenario.mtu
        attTimeout = scenario.attTimeout
        advertiseWhileConnected = scenario.advertiseWhileConnected
        linkModel = scenario.link
        schedule = FaultSchedule(scenario.faults, start: start)
        clock = start
        self.start = start
        for (index, device) in scenario.devices.enumerated() {
            if let gatt = device.gatt { servers[index] = GATTServer(gatt, start: start) }
            if let terminal = device.terminal { terminals[index] = terminal }
        }
    }

    /// Events of one adapter, tagged with its index.
    public struct Batch: Sendable, Equatable {
        /// The adapter's index (N in hciN).
        public var adapter: Int
        /// What happened on it, in order.
        public var events: [AdapterEvent]

        /// A batch of `events` on adapter `adapter`.
        public init(adapter: Int, events: [AdapterEvent]) {
            self.adapter = adapter
            self.events = events
        }
    }

    /// Whether any adapter is discovering (then the air must be run).
    public var isListening: Bool { adapters.contains(where: \.isListening) }

    /// When `advance(to:)` next has something to do: the next advertisement while an adapter
    /// listens, or the next temporary-device expiry.
    public var nextDeadline: SimInstant? {
        let expiry =
            (adapters.compactMap(\.nextExpiry) + servers.values.compactMap(\.nextDeadline)
            + [
                nextTerminalDeadline, nextAdvertisementExpiry, schedule.nextDeadline, nextPacedWrite,
            ].compactMap { $0 }).min()
        guard isListening, let advertisement = air.nextEvent else { return expiry }
        return min(expiry ?? advertisement, advertisement)
    }

    /// Runs the air up to `now`: every advertisement due is heard by every listening adapter
    /// (with its own RSSI), and temporary devices expire. Returns the events per adapter.
    public mutating func advance(to now: SimInstant) -> [Batch] {
        var batches: [[AdapterEvent]] = Array(repeating: [], count: adapters.count)
        clock = max(clock, now)
        for fault in schedule.due(through: now) {
            for batch in apply(fault).batches { batches[batch.adapter] += batch.events }
        }
        let listening = isListening
        // An adapter's own advertisement stops once a central connects, until the link ends: the
        // kernel's legacy advertising is disabled by the connection and re-enabled at disconnection
        // (seen against bluetoothd in the VM: the connected terminal vanished from scans).
        // (A controller whose LE states allow it keeps advertising: `advertiseWhileConnected`.)
        let connectedLocal =
            advertiseWhileConnected
            ? []
            : Set(links.values.filter(\.connected).map(\.device)).intersection(localPeripherals.values.map(\.device))
        for (deviceIndex, time) in air.events(through: now)
        where listening && !silenced.contains(deviceIndex) && !offAir.contains(deviceIndex)
            && !connectedLocal.contains(deviceIndex)
        {
            let device = devices[deviceIndex]
            let advertisement = currentAdvertisement(deviceIndex, at: time)
            for adapterIndex in adapters.indices
            where adapters[adapterIndex].isListening && localPeripherals[adapterIndex]?.device != deviceIndex {
                let spec = adapters[adapterIndex].spec
                let rssi = device.radio.rssi(observer: spec.position, at: time, using: &noise)
                guard Int(rssi) >= spec.sensitivity else { continue }
                let report = AdvertisingReport(
                    address: device.address, addressType: device.addressType, rssi: rssi,
                    connectable: device.connectable, advertisement: advertisement)
                batches[adapterIndex] += adapters[adapterIndex].receive(report, at: time)
            }
        }
        deliverPacedWrites(through: now)
        for (adapterIndex, events) in advanceServers(to: now) { batches[adapterIndex] += events }
        for batch in advanceTerminals(to: now) { batches[batch.adapter] += batch.events }
        for batch in expireAdvertisements(at: now) { batches[batch.adapter] += batch.events }
        for index in adapters.indices {
            batches[index] += removingGATT(adapter: index, adapters[index].expire(at: now))
        }
        return batches.enumerated().compactMap { index, events in
            events.isEmpty ? nil : Batch(adapter: index, events: events)
        }
    }

    /// What device `index` advertises at `time`: its scenario advertisement, with a sensor's service data
    /// for the measurement current at `time` (made once per measurement).
    mutating func currentAdvertisement(_ index: Int, at time: SimInstant) -> Advertisement {
        let device = devices[index]
        guard let sensor = device.sensor else { return device.advertisement }
        let measurement = sensor.measurement(at: Double(time.nanoseconds - start.nanoseconds) / 1e9)
        if let cached = sensorAdvertisements[index], cached.measurement == measurement { return cached.advertisement }
        var advertisement = device.advertisement
        let data = sensor.serviceData(
            address: device.address, measurement: measurement, intervalMilliseconds: device.intervalMilliseconds)
        if let slot = advertisement.serviceData.firstIndex(where: { $0.uuid == sensor.uuid }) {
            advertisement.serviceData[slot].data = data
        } else {
            advertisement.serviceData.append(ServiceDatum(uuid: sensor.uuid, data: data))
        }
        sensorAdvertisements[index] = (measurement, advertisement)
        return advertisement
    }

    /// Runs `operation` on adapter `index` (a client's request) and returns its events; nil
    /// when there is no such adapter.
    public mutating func withAdapter<R>(
        _ index: Int, _ operation: (inout SimAdapter) throws(BlueZError) -> R
    ) throws(BlueZError) -> R? {
        guard adapters.indices.contains(index) else { return nil }
        return try operation(&adapters[index])
    }

    /// A client left the bus: its sessions on every adapter end.
    public mutating func clientLeft(owner: String) -> [Batch] {
        adapters.indices.compactMap { index in
            let events = adapters[index].clientLeft(owner: owner)
            return events.isEmpty ? nil : Batch(adapter: index, events: events)
        }
    }
}
