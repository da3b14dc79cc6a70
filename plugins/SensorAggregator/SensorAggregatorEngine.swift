import GATT

/// Everything the sensor aggregator decides, as one pure state machine: the
/// BLE shell (`SensorAggregatorNode`) feeds it readings, ingest datagrams, subscription
/// events, Config writes and the time, and performs the ``Action``s it
/// returns. It never reads a clock, a file or a socket.
public struct SensorAggregatorEngine: Sendable {
    /// What the shell must do.
    public enum Action: Sendable, Hashable {
        /// Send a notification (`updateValue` for one central); call
        /// ``refused(_:)`` if the transport does not take it.
        case notify(NotificationPolicy.Notification)
        /// Register this advertisement in place of the current one.
        case advertise(SensorAdvertisementPlan)
        /// Save the snapshot now (``AggregateSnapshotStore/save(_:now:)``),
        /// then call ``flushed(at:)``.
        case flush
        /// A sensor crossed a threshold (`breach` nil: back within limits):
        /// publish a plugin event.
        case threshold(sensor: String, breach: ThresholdBreach?, value: Double)
    }

    /// The config in force (Config writes change it).
    public private(set) var config: SensorAggregatorConfig
    /// The windows.
    public private(set) var state: AggregateState
    /// Ingest line counters.
    public private(set) var counters = IngestCounters()
    /// The reading recorded last (what the fleet publishes to `<prefix>/sensors/<id>`).
    public private(set) var lastRecorded: SensorReading?
    /// The last advertisement handed out.
    public private(set) var advertisement: SensorAdvertisementPlan

    private var policy: NotificationPolicy
    private var schedule: FlushSchedule
    private var thresholds = ThresholdMonitor()
    private var parser: IngestLineParser
    /// Readings refused as outside their sensor's physical range, by sensor (every source).
    public private(set) var refusedReadings: [String: Int] = [:]
    private var advertisementDue = false
    private var lastAdvertised: Double
    private var lastSummaryRefresh: Double

    /// An engine for `config`, starting at `now` with empty windows.
    public init(config: SensorAggregatorConfig, now: Double) {
        self.config = config
        state = AggregateState(
            sensorIDs: config.sensors.map(\.id), windowSeconds: Double(config.windowSeconds),
            capacity: config.maxSamplesPerWindow,
            ranges: Dictionary(
                config.sensors.map { ($0.id, $0.kind.physicalRange) }, uniquingKeysWith: { first, _ in first }))
        policy = NotificationPolicy(
            rules: Self.rules(for: config),
            defaultRule: .init(delta: nil, interval: Double(config.notification.intervalSeconds)),
            queueLimit: config.notification.queueLimit)
        schedule = FlushSchedule(interval: Double(config.flushSeconds), now: now)
        parser = IngestLineParser(config: config)
        advertisement = SensorAdvertisementBuilder.build(config: config.advertising, values: AdvertisedValues())
        lastAdvertised = now
        lastSummaryRefresh = now
    }

    /// Replaces the windows with restored ones (from the snapshot at start).
    public mutating func adopt(restored: AggregateState, now: Double) {
        guard restored.sensorIDs == state.sensorIDs else { return }
        state = restored
        state.expire(now: now)
        advertisementDue = true
    }

    /// The current value of `characteristic` for a read: an ESS or Battery
    /// Level value, the Summary or the Config; nil for one the engine does
    /// not serve.
    public func read(_ characteristic: BluetoothUUID, now: Double) -> [UInt8]? {
        switch characteristic {
        case SensorAggregatorProfile.summaryCharacteristic:
            return AggregatesSummary(state: state, config: config, now: now).bytes
        case SensorAggregatorProfile.configCharacteristic:
            return ConfigCharacteristicValue(config: config).bytes
        default:
            guard let (sensor, _) = sensor(for: characteristic) else { return nil }
            let last = state.summary(of: sensor.id, now: now)?.last?.value
            return last.flatMap { try? SensorAggregatorProfile.encode($0, kind: sensor.kind) }
                ?? unknownValue(sensor.kind)
        }
    }

    /// The characteristics the engine serves values for, by kind present.
    public var servedCharacteristics: [BluetoothUUID] {
        SensorKind.allCases.compactMap { kind in config.primarySensor(of: kind).flatMap { _ in Self.uuid(for: kind) } }
            + [SensorAggregatorProfile.summaryCharacteristic, SensorAggregatorProfile.configCharacteristic]
    }

    /// Records a reading from a file or simulated source.
    public mutating func record(_ reading: SensorReading, now: Double) -> [Action] {
        recordReading(reading, now: now).actions
    }

    private mutating func recordReading(
        _ reading: SensorReading, now: Double
    ) -> (outcome: RecordOutcome, actions: [Action]) {
        let outcome = state.record(reading, now: now)
        if outcome == .outOfRange { refusedReadings[reading.sensor, default: 0] += 1 }
        guard outcome == .recorded else { return (outcome, []) }
        lastRecorded = reading
        schedule.markDirty()
        var actions: [Action] = []
        if let sensor = config.sensors.first(where: { $0.id == reading.sensor }) {
            var urgent = false
            if let change = thresholds.observe(sensor: sensor.id, value: reading.value, thresholds: sensor.thresholds) {
                actions.append(.threshold(sensor: sensor.id, breach: change, value: reading.value))
                urgent = true
            }
            if config.primarySensor(of: sensor.kind)?.id == sensor.id, let uuid = Self.uuid(for: sensor.kind),
                let latest = state.summary(of: sensor.id, now: now)?.last,
                let bytes = try? SensorAggregatorProfile.encode(latest.value, kind: sensor.kind)
            {
                let value = NotificationPolicy.Value(bytes: bytes, number: latest.value, urgent: urgent)
                actions += policy.update(characteristic: uuid, value: value, now: now).map(Action.notify)
                advertisementDue = true
            }
        }
        return (outcome, actions)
    }

    /// Parses and records one ingest datagram; a bad one is counted.
    public mutating func ingest(_ datagram: [UInt8], now: Double) -> [Action] {
        switch parser.parse(datagram, now: now) {
        case .failure(let rejection):
            counters.count(rejection)
            return []
        case .success(let reading):
            let (outcome, actions) = recordReading(reading, now: now)
            switch outcome {
            case .recorded: counters.countAccepted()
            case .unknownSensor: counters.count(.unknownSensor)
            case .outsideWindow: counters.count(.outsideWindow)
            case .outOfRange: counters.count(.outOfRange)
            }
            return actions
        }
    }

    /// A central subscribed.
    public mutating func subscribe(central: String, characteristic: BluetoothUUID, now: Double) -> [Action] {
        if characteristic == SensorAggregatorProfile.summaryCharacteristic { refreshSummary(now: now) }
        return policy.subscribe(central: central, characteristic: characteristic, now: now).map(Action.notify)
    }

    /// A central unsubscribed.
    public mutating func unsubscribe(central: String, characteristic: BluetoothUUID) {
        policy.unsubscribe(central: central, characteristic: characteristic)
    }

    /// A central disconnected.
    public mutating func disconnect(central: String) { policy.disconnect(central: central) }

    /// Each central's subscriptions (for `blectl`).
    public var subscriptions: [(central: String, characteristics: [BluetoothUUID])] {
        policy.centrals.map { ($0, policy.subscriptions(of: $0)) }
    }

    /// Waiting notifications dropped because a blocked central's queue was
    /// full (`notification.queueLimit`), by central.
    public var droppedNotifications: [String: Int] { policy.dropped }

    /// The transport did not take `notification`.
    public mutating func refused(_ notification: NotificationPolicy.Notification) { policy.refused(notification) }

    /// The transport can take more for `central`.
    public mutating func transmitReady(central: String, now: Double) -> [Action] {
        policy.transmitReady(central: central, now: now).map(Action.notify)
    }

    /// A Config write: applied, or refused with the ATT error to answer.
    public mutating func writeConfig(_ bytes: [UInt8], now: Double) -> Result<[Action], ConfigWriteRefusal> {
        do {
            let value = try ConfigCharacteristicValue.decode(bytes, sensorCount: config.sensors.count)
            config = value.applied(to: config)
            state.setWindowLength(Double(config.windowSeconds), now: now)
            policy.rules = Self.rules(for: config)
            policy.defaultRule = .init(delta: nil, interval: Double(config.notification.intervalSeconds))
            schedule.markDirty()
            refreshSummary(now: now)
            return .success(policy.tick(now: now).map(Action.notify))
        } catch {
            return .failure(error)
        }
    }

    /// When ``tick(now:)`` next has work, or nil.
    public var nextDeadline: Double? {
        let interval = Double(config.notification.intervalSeconds)
        var deadlines = [policy.nextDeadline, schedule.nextDeadline].compactMap { $0 }
        if advertisementDue { deadlines.append(lastAdvertised + interval) }
        if hasSummarySubscribers { deadlines.append(lastSummaryRefresh + interval) }
        return deadlines.min()
    }

    /// Does whatever is due at `now`.
    public mutating func tick(now: Double) -> [Action] {
        let interval = Double(config.notification.intervalSeconds)
        state.expire(now: now)
        if hasSummarySubscribers, now >= lastSummaryRefresh + interval { refreshSummary(now: now) }
        var actions = policy.tick(now: now).map(Action.notify)
        if advertisementDue, now >= lastAdvertised + interval {
            advertisementDue = false
            lastAdvertised = now
            let plan = SensorAdvertisementBuilder.build(config: config.advertising, values: advertisedValues(now: now))
            if plan != advertisement {
                advertisement = plan
                actions.append(.advertise(plan))
            }
        }
        if schedule.isDue(now: now) { actions.append(.flush) }
        return actions
    }

    /// The snapshot was saved at `now`.
    public mutating func flushed(at now: Double) { schedule.flushed(at: now) }

    /// The values the advertisement carries at `now`.
    public func advertisedValues(now: Double) -> AdvertisedValues {
        func last(_ kind: SensorKind) -> Double? {
            config.primarySensor(of: kind).flatMap { state.summary(of: $0.id, now: now)?.last?.value }
        }
        return AdvertisedValues(
            temperature: last(.temperature), humidity: last(.humidity), pressure: last(.pressure),
            battery: last(.battery))
    }

    private var hasSummarySubscribers: Bool {
        policy.centrals.contains {
            policy.subscriptions(of: $0).contains(SensorAggregatorProfile.summaryCharacteristic)
        }
    }

    private mutating func refreshSummary(now: Double) {
        lastSummaryRefresh = now
        let bytes = AggregatesSummary(state: state, config: config, now: now).bytes
        // No delta: the policy sends it at the interval when it changed.
        _ = policy.update(
            characteristic: SensorAggregatorProfile.summaryCharacteristic,
            value: NotificationPolicy.Value(bytes: bytes), now: now)
    }

    private func sensor(for characteristic: BluetoothUUID) -> (SensorConfig, SensorKind)? {
        for kind in SensorKind.allCases where Self.uuid(for: kind) == characteristic {
            if let sensor = config.primarySensor(of: kind) { return (sensor, kind) }
        }
        return nil
    }

    private func unknownValue(_ kind: SensorKind) -> [UInt8]? {
        switch kind {
        case .temperature: TemperatureValue.unknown.bytes
        case .humidity: HumidityValue.unknown.bytes
        default: nil
        }
    }

    private static func uuid(for kind: SensorKind) -> BluetoothUUID? {
        kind == .battery ? .batteryLevel : SensorAggregatorProfile.essCharacteristic(for: kind)
    }

    private static func rules(for config: SensorAggregatorConfig) -> [BluetoothUUID: NotificationPolicy.Rule] {
        var rules: [BluetoothUUID: NotificationPolicy.Rule] = [:]
        let interval = Double(config.notification.intervalSeconds)
        for kind in SensorKind.allCases {
            guard let sensor = config.primarySensor(of: kind), let uuid = uuid(for: kind) else { continue }
            rules[uuid] = .init(delta: sensor.notifyDelta, interval: interval)
        }
        return rules
    }
}
