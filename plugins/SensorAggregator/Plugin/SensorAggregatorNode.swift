import BLE
import GATT
import JSON
import RoleKit

/// The sensor aggregator at run time: one actor owns the engine and performs
/// its actions. Inputs (source polls, ingest datagrams, ATT requests,
/// subscription changes, ready-to-update) each arrive on their own task and
/// enter here; one timer task sleeps until the earliest of the engine's next
/// deadline and the next poll, and is re-armed after every input.
actor SensorAggregatorNode {
    private var engine: SensorAggregatorEngine
    private let manager: PeripheralManager?
    private let snapshots: AggregateSnapshotStore
    /// Whether a flush may replace the snapshot file (not over one that could not be read or set aside).
    private var mayFlush = false
    private let logger: PluginLogger
    private let events: any PluginEventSink
    private let fleet: any FleetPublisher
    private let services: [GATTService]
    private let deviceInformation: [BluetoothUUID: [UInt8]]
    private let files = SensorFileReader()
    /// Next poll time and tick count per polled sensor.
    private var polls: [String: (due: Double, tick: UInt64)] = [:]
    private let pollStart: Double
    /// Centrals by the engine's name for them.
    private var centrals: [String: PeripheralIdentifier] = [:]
    private var mtus: [String: Int] = [:]
    private var blocked: Set<String> = []
    private var published = false
    /// An advertisement plan that could not be applied (the manager was not
    /// poweredOn: bluetoothd restarting, the adapter off): applied at the next
    /// poweredOn, so the advertisement is never lost to a badly timed update.
    private var pendingAdvertisement: SensorAdvertisementPlan?
    private var timer: Task<Void, Never>?
    /// Set by ``shutdown()``: work suspended across it (a sensor file read, an advertisement update) ends
    /// without arming the timer or saving again.
    private var stopped = false
    /// Saves of the snapshot awaited now.
    private var savesInFlight = 0
    /// Bumped at each re-arm: a timer that woke for an older arming does nothing.
    private var timerGeneration: UInt64 = 0
    private var loggedFileErrors: Set<String> = []
    /// The refused-reading count of each sensor last looked at (``logIfRefused(_:_:)``).
    private var refusedLogged: [String: Int] = [:]
    /// Notifications the transport refused (flow control), for `sensors.ingest-stats`' sibling.
    private(set) var refusedUpdates = 0

    init(
        config: SensorAggregatorConfig, manager: PeripheralManager?, state: PluginStateStore, logger: PluginLogger,
        events: any PluginEventSink, fleet: any FleetPublisher = NoFleet(), now: Double
    ) {
        engine = SensorAggregatorEngine(config: config, now: now)
        self.manager = manager
        self.logger = logger
        self.events = events
        self.fleet = fleet
        snapshots = AggregateSnapshotStore(store: state, logger: logger)
        services = SensorGATTLayout.services(for: config)
        deviceInformation = Dictionary(
            uniqueKeysWithValues: SensorGATTLayout.deviceInformation(config.deviceInformation).map {
                ($0.uuid, Array($0.value.utf8))
            })
        pollStart = now
        for sensor in config.sensors where sensor.source.pollSeconds != nil { polls[sensor.id] = (now, 0) }
    }

    /// Restores the aggregates from the snapshot (read on the blocking pool); call once, before ``begin()``.
    func restore(now: Double) async {
        var restored = engine.state
        let outcome = await snapshots.load(into: &restored, now: now)
        switch outcome {
        case .noSnapshot: break
        case .restored(let skipped):
            engine.adopt(restored: restored, now: now)
            let count = restored.windows.values.reduce(0) { $0 + $1.samples.count }
            logger.info(
                "restored \(count) samples from \(AggregateSnapshotStore.fileName)"
                    + (skipped.isEmpty
                        ? "" : "; skipped sensors no longer configured: \(skipped.joined(separator: ", "))"))
        case .setAside(let name, let reason): logger.warning("snapshot unreadable (\(reason)); kept as \(name)")
        case .unreadable(let reason):
            logger.error("snapshot unreadable (\(reason)) and not renamed: not flushing over it")
        }
        mayFlush = outcome.mayFlush
    }

    // MARK: inputs

    /// Polls the sources due now and arms the timer.
    func begin() async { await fire() }

    /// Publishes the services and the advertisement (once the manager is poweredOn).
    func publish() async {
        guard let manager else { return }
        if published {
            if let plan = pendingAdvertisement { await advertise(plan) }
            return
        }
        do {
            for service in services { try await manager.add(service) }
            try await manager.startAdvertising(engine.advertisement.data)
            published = true
            logger.info("published \(services.count) services; advertising \(engine.advertisement.bytes.count) bytes")
        } catch {
            logger.error("cannot publish: \(error)")
        }
    }

    /// One ingest datagram.
    func ingest(_ datagram: [UInt8]) async {
        guard !stopped else { return }
        let before = engine.counters
        let actions = engine.ingest(datagram, now: unixNow())
        if engine.counters.accepted > before.accepted, let reading = engine.lastRecorded { publishToFleet(reading) }
        for reason in IngestRejection.allCases where engine.counters.rejections(reason) > before.rejections(reason) {
            let count = engine.counters.rejections(reason)
            // Every line is counted; the log gets the 1st, 2nd, 4th, 8th... of each reason.
            if count & (count - 1) == 0 {
                logger.warning("ingest: bad line (\(reason.rawValue), \(count) so far): \(Self.preview(datagram))")
            }
        }
        await perform(actions)
    }

    /// An ATT request from a central.
    func handle(_ request: ATTRequest) async {
        let uuid = request.characteristic.uuid
        let now = unixNow()
        if request.isRead {
            guard let value = deviceInformation[uuid] ?? engine.read(uuid, now: now) else {
                _ = request.respond(withError: .readNotPermitted)
                return
            }
            guard request.offset <= value.count else {
                _ = request.respond(withError: .invalidOffset)
                return
            }
            _ = request.respond(with: Array(value[request.offset...]))
            return
        }
        guard uuid == SensorAggregatorProfile.configCharacteristic else {
            _ = request.respond(withError: .writeNotPermitted)
            return
        }
        guard request.offset == 0 else {
            _ = request.respond(withError: .invalidOffset)
            return
        }
        switch engine.writeConfig(request.value, now: now) {
        case .failure(let refusal):
            logger.warning("\(refusal) (from \(request.central))")
            _ = request.respond(withError: refusal.attError)
        case .success(let actions):
            _ = request.respond()
            logger.info(
                "config written by \(request.central): window \(engine.config.windowSeconds) s, interval \(engine.config.notification.intervalSeconds) s"
            )
            events.emit(
                "config",
                [
                    "windowSeconds": .int(Int64(engine.config.windowSeconds)),
                    "intervalSeconds": .int(Int64(engine.config.notification.intervalSeconds)),
                ])
            await perform(actions)
        }
    }

    /// A subscription change.
    func handle(_ event: SubscriptionEvent) async {
        switch event {
        case .subscribed(let central, let characteristic, let mtu):
            let name = central.description
            centrals[name] = central
            mtus[name] = mtu.value
            await perform(engine.subscribe(central: name, characteristic: characteristic.uuid, now: unixNow()))
        case .unsubscribed(let central, let characteristic):
            engine.unsubscribe(central: central.description, characteristic: characteristic.uuid)
            rearm()
        }
    }

    /// The transport can take updates again.
    func transmitReady() async {
        let waiting = blocked
        blocked = []
        for central in waiting.sorted() { await perform(engine.transmitReady(central: central, now: unixNow())) }
    }

    /// Flushes (when dirty, or when a save is still being written) and stops the timer.
    func shutdown() async {
        stopped = true
        timer?.cancel()
        timer = nil
        // A save still in flight (its caller suspended across this call) is waited for: the last save is this one.
        if engine.nextDeadline != nil || savesInFlight > 0 { await flush(now: unixNow(), final: true) }
    }

    // MARK: control

    /// `sensors.readings`: each sensor's window.
    func readings() -> JSON {
        let now = unixNow()
        var list: [JSON] = []
        for (index, sensor) in engine.config.sensors.enumerated() {
            let summary = engine.state.summary(of: sensor.id, now: now)
            var object: JSONObject = [
                "index": .int(Int64(index)), "id": .string(sensor.id), "kind": .string(sensor.kind.rawValue),
                "unit": .string(sensor.unit), "count": .int(Int64(summary?.count ?? 0)),
            ]
            object["min"] = summary?.minimum.map(JSON.double) ?? .null
            object["max"] = summary?.maximum.map(JSON.double) ?? .null
            object["mean"] = summary?.mean.map(JSON.double) ?? .null
            object["last"] = summary?.last.map { JSON.double($0.value) } ?? .null
            object["lastTime"] = summary?.last.map { JSON.double($0.time) } ?? .null
            list.append(.object(object))
        }
        return [
            "windowSeconds": .int(Int64(engine.config.windowSeconds)), "sensors": .array(list),
            "advertisement": .string(engine.advertisement.bytes.map { hex($0) }.joined()),
        ]
    }

    /// `sensors.subscriptions`: each central's subscriptions as the engine knows them.
    func subscriptions() -> JSON {
        let list: [JSON] = engine.subscriptions.map { central, characteristics in
            [
                "central": .string(central), "mtu": mtus[central].map { .int(Int64($0)) } ?? .null,
                "blocked": .bool(blocked.contains(central)),
                "dropped": .int(Int64(engine.droppedNotifications[central] ?? 0)),
                "characteristics": .array(characteristics.map { .string($0.uuidString) }),
            ]
        }
        return [
            "centrals": .array(list),
            "note":
                "bluetoothd does not say which central subscribed (docs/bluez-peripheral.md): on BlueZ all subscribers of an adapter appear as one unidentified central",
        ]
    }

    /// `sensors.ingest-stats`: accepted and rejected lines by reason, and
    /// `overflowed`, the datagrams the socket dropped unparsed (a flood).
    func ingestStats(overflowed: Int) -> JSON {
        var rejected = JSONObject()
        for reason in IngestRejection.allCases {
            rejected[reason.rawValue] = .int(Int64(engine.counters.rejections(reason)))
        }
        return [
            "accepted": .int(Int64(engine.counters.accepted)),
            "rejectedTotal": .int(Int64(engine.counters.totalRejected)), "rejected": .object(rejected),
            "overflowed": .int(Int64(overflowed)), "refusedUpdates": .int(Int64(refusedUpdates)),
        ]
    }

    // MARK: timer and actions

    private func timerFired(_ generation: UInt64) async {
        guard generation == timerGeneration else { return }
        timer = nil
        await fire()
    }

    private func fire() async {
        guard !stopped else { return }
        let now = unixNow()
        var actions: [SensorAggregatorEngine.Action] = []
        for sensor in engine.config.sensors {
            guard let poll = polls[sensor.id], poll.due <= now, let period = sensor.source.pollSeconds else { continue }
            if let value = await sample(sensor, tick: poll.tick) {
                let reading = SensorReading(sensor: sensor.id, value: value, time: now)
                actions += engine.record(reading, now: now)
                if engine.lastRecorded == reading { publishToFleet(reading) }
                logIfRefused(sensor, value)
            }
            let tick = poll.tick + 1
            polls[sensor.id] = (pollStart + Double(tick) * period, tick)
            if polls[sensor.id]!.due <= now { polls[sensor.id] = (now + period, tick) }  // fell behind: skip
        }
        actions += engine.tick(now: now)
        await perform(actions)
    }

    /// Logs the 1st, 2nd, 4th, 8th... reading of `sensor` refused as physically impossible.
    private func logIfRefused(_ sensor: SensorConfig, _ value: Double) {
        guard let count = engine.refusedReadings[sensor.id], count != refusedLogged[sensor.id] else { return }
        refusedLogged[sensor.id] = count
        guard count & (count - 1) == 0 else { return }
        let range = sensor.kind.physicalRange
        logger.warning(
            "sensor \(sensor.id): \(value) is outside a \(sensor.kind.rawValue) sensor's range "
                + "\(range.lowerBound)...\(range.upperBound); not recorded (\(count) so far)")
    }

    /// A recorded reading to `<prefix>/sensors/<id>` (coalesced per sensor by the agent).
    private func publishToFleet(_ reading: SensorReading) {
        fleet.publishReading(sensor: reading.sensor, value: reading.value, time: reading.time)
    }

    /// A sensor's value now; a file is read on the blocking pool (the actor stays free meanwhile).
    private func sample(_ sensor: SensorConfig, tick: UInt64) async -> Double? {
        switch sensor.source {
        case .ingest: return nil
        case .simulated(let source): return SimulatedWaveform.value(of: source, tick: tick)
        case .file(let source):
            do throws(SensorFileError) {
                let value = try await files.read(source)
                loggedFileErrors.remove(sensor.id)
                return value
            } catch {
                if loggedFileErrors.insert(sensor.id).inserted { logger.warning("sensor \(sensor.id): \(error)") }
                return nil
            }
        }
    }

    private func rearm() {
        guard !stopped else { return }
        timer?.cancel()
        timerGeneration += 1
        let generation = timerGeneration
        let deadlines = [engine.nextDeadline].compactMap { $0 } + polls.values.map(\.due)
        guard let next = deadlines.min() else {
            timer = nil
            return
        }
        let delay = max(0, next - unixNow())
        timer = Task {
            guard (try? await Task.sleep(for: .milliseconds(Int64((delay * 1000).rounded(.up))))) != nil else { return }
            await self.timerFired(generation)
        }
    }

    private func perform(_ actions: [SensorAggregatorEngine.Action]) async {
        for action in actions {
            switch action {
            case .notify(let notification): send(notification)
            case .advertise(let plan): await advertise(plan)
            case .flush: await flush(now: unixNow())
            case .threshold(let sensor, let breach, let value):
                logger.info(
                    "sensor \(sensor) \(breach.map { "breached \($0.rawValue)" } ?? "back within limits"): \(value)")
                events.emit(
                    "threshold",
                    [
                        "sensor": .string(sensor), "breach": breach.map { .string($0.rawValue) } ?? .null,
                        "value": .double(value),
                    ])
            }
        }
        rearm()
    }

    private func send(_ notification: NotificationPolicy.Notification) {
        guard let manager, let central = centrals[notification.central],
            let characteristic = SensorGATTLayout.localCharacteristic(notification.characteristic, in: services)
        else { return }
        if !manager.updateValue(notification.value, for: characteristic, onSubscribedCentrals: [central]) {
            refusedUpdates += 1
            engine.refused(notification)
            blocked.insert(notification.central)
        }
    }

    private func advertise(_ plan: SensorAdvertisementPlan) async {
        guard let manager, published else { return }
        if !plan.unrepresentable.isEmpty {
            logger.warning("not advertised (outside BTHome's range): \(plan.unrepresentable.map(\.rawValue))")
        }
        guard manager.currentState == .poweredOn else {
            if pendingAdvertisement == nil {
                logger.info("advertisement update waits for poweredOn (now \(manager.currentState.rawValue))")
            }
            pendingAdvertisement = plan
            return
        }
        pendingAdvertisement = nil
        do {
            try await manager.stopAdvertising()
            try await manager.startAdvertising(plan.data)
        } catch {
            pendingAdvertisement = plan
            logger.error("cannot advertise (retried at the next poweredOn): \(error)")
        }
    }

    /// Saves the aggregates as they are now. The state is taken and marked flushed before the write is awaited
    /// (changes made meanwhile mark it dirty again); the state store writes one save at a time, in order, the latest
    /// winning.
    private func flush(now: Double, final: Bool = false) async {
        guard mayFlush, final || !stopped else { return }
        let snapshot = engine.state
        engine.flushed(at: now)
        do throws(PluginStateError) {
            savesInFlight += 1
            defer { savesInFlight -= 1 }
            try await snapshots.save(snapshot, now: now)
            let samples = snapshot.windows.values.reduce(0) { $0 + $1.samples.count }
            events.emit("flushed", ["samples": .int(Int64(samples)), "savedAt": .double(now)])
        } catch {
            logger.error("cannot save aggregates: \(error)")
        }
    }

    private static func preview(_ datagram: [UInt8]) -> String {
        let text = String(decoding: datagram.prefix(80), as: UTF8.self)
        return text.count < datagram.count ? "\(text)..." : text
    }
}

private func hex(_ byte: UInt8) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
}
