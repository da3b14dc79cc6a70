import BLE
import JSON
import PaymentTerminalProfile
import RoleKit

/// The scanner's one owner of state: the terminal table, the journal and its
/// replayed state, the link to the chosen terminal and the payments waiting
/// for their final status. The BLE streams feed it; the pos.* methods ask it.
actor ScannerEngine {
    let central: CentralManager
    let config: ScannerConfig
    let logger: PluginLogger
    let events: any PluginEventSink
    let fleet: any FleetPublisher
    var table: TerminalTable
    var state: JournalState
    let journal: PaymentJournal
    /// The table's ids (peripheral identifiers' text) to the identifiers.
    var identifiers: [String: PeripheralIdentifier] = [:]
    /// The link to the chosen terminal, while one is chosen.
    var link: TerminalLink?
    /// pos.pay calls waiting for their payment's final status.
    var waiters: [TransactionID: AsyncStream<PaymentOutcome>.Continuation] = [:]
    private let origin = ContinuousClock.now
    /// When unsettled payments were last queried (on connect or again later).
    var lastQueries: Duration = .zero
    /// Whether a later round of queries is running.
    var requerying = false

    init(central: CentralManager, config: ScannerConfig, context: RoleContext) async throws(JournalError) {
        self.central = central
        self.config = config
        self.logger = context.logger
        self.events = context.events
        self.fleet = context.fleet
        self.table = TerminalTable(policy: config.policy)
        let (journal, contents) = try await PaymentJournal.open(path: "\(context.state.directory)/\(config.journal)")
        self.journal = journal
        var state = JournalState(replaying: contents.records)
        // After a restart nothing in flight is known: every unsettled payment is reconciling.
        for record in ReconciliationPlanner.markUnknown(in: state, why: "restart") {
            try await journal.append(record)
            state.apply(record)
        }
        self.state = state
    }

    /// Monotonic time since the engine started, the table's clock.
    var now: Duration { ContinuousClock.now - origin }

    /// A discovery from the scan: update the table and the choice.
    func observe(_ found: Discovery) {
        let key = found.identifier.uuidString
        identifiers[key] = found.identifier
        // 127 is HCI's "not available" (btvirt reports nothing else): the
        // terminal is listed and can be pinned, but never chosen by RSSI.
        let rssi = found.measuredRSSI
        let before = table.selected
        let isNew = table.entry(key) == nil
        let name = found.name ?? found.advertisement.localName
        table.observe(id: key, name: name, rssi: rssi, at: now)
        if isNew {
            logger.info("terminal found: \(describe(key)), RSSI \(rssi.map { "\($0) dBm" } ?? "not available")")
            events.emit(
                "terminal-found",
                [
                    "terminal": .string(key), "name": name.map(JSON.string) ?? .null,
                    "rssi": rssi.map { .int(Int64($0)) } ?? .null,
                ])
        }
        choiceMayHaveChanged(from: before)
    }

    /// Re-evaluates the choice with time passing (expiry, dwell), and queries
    /// unsettled payments again when due.
    func tick() {
        let before = table.selected
        // The connected terminal does not advertise while connected: its link is its sighting.
        if let link, link.session != nil { table.touch(link.key, at: now) }
        table.tick(at: now)
        choiceMayHaveChanged(from: before)
        requeryIfDue()
    }

    /// Emits the selection events and moves the link when the choice changed.
    func choiceMayHaveChanged(from before: String?) {
        let after = table.selected
        guard before != after else { return }
        if let before {
            logger.info("terminal lost: \(describe(before))")
            events.emit("terminal-lost", ["terminal": .string(before)])
            dropLink()
        }
        if let after, let id = identifiers[after] {
            let entry = table.entry(after)
            let rssi = entry.flatMap { $0.rssiKnown ? Int64($0.smoothedRSSI.rounded()) : nil }
            logger.info("terminal selected: \(describe(after)), RSSI \(rssi.map { "\($0) dBm" } ?? "not available")")
            events.emit(
                "terminal-selected",
                [
                    "terminal": .string(after), "name": entry?.name.map(JSON.string) ?? .null,
                    "rssi": rssi.map { .int($0) } ?? .null,
                ])
            startLink(key: after, identifier: id)
        }
    }

    func describe(_ key: String) -> String {
        if let name = table.entry(key)?.name { return "\(name) (\(key))" }
        return key
    }

    /// Applies a record to the state and appends it to the journal; returns
    /// once it is written and fsync'ed (on the blocking pool: the actor serves
    /// other calls meanwhile). The state changes first, so records reach the
    /// file in the order they were applied; an acceptance that cannot be
    /// journalled is withdrawn again. The payment's `accepted` and `final`
    /// records also go to the fleet's durable outbox (`<prefix>/payments`,
    /// docs/profiles/payment-terminal.md): a final status before the journal
    /// (if the lane dies in between, the restart reconciles the same final
    /// status with the terminal and publishes it again), an acceptance after
    /// it (the restart offers every unsettled payment's acceptance again).
    /// pos.pay hands the acceptance over itself
    /// (``publishDurably(_:admission:)``), so that it can settle the payment
    /// unsent when the outbox refuses it.
    func record(_ record: JournalRecord) async throws(JournalError) {
        let id = record.transactionID
        if case .final = record, state.payments[id]?.phase != .final {
            var next = state
            next.apply(record)
            if let entry = next.payments[id] { await publishDurably(entry, admission: .closing) }
        }
        state.apply(record)
        do {
            try await journal.append(record)
        } catch {
            if case .accepted = record { state.withdraw(id) }
            throw error
        }
        guard let entry = state.payments[id] else { return }
        var data: JSONObject = [
            "transactionId": .string(entry.transactionID.uuidString), "phase": .string(entry.phase.rawValue),
            "terminal": .string(entry.terminal),
        ]
        if let status = entry.finalStatus { data["state"] = .string(status.state.description) }
        if let why = entry.reconcilingReason, entry.phase == .reconciling { data["reconciling"] = .string(why) }
        events.emit("payment", .object(data))
    }

    /// Hands `entry`'s record to the fleet's outbox; an error is logged and returned.
    @discardableResult
    func publishDurably(_ entry: PaymentEntry, admission: DurableRecord.Admission) async -> DurablePublishError? {
        guard fleet.isEnabled else { return nil }
        var payload = posPaymentJSON(entry)
        if admission == .opening, case .object(var object) = payload {
            object["phase"] = "accepted"
            object["reconciling"] = nil
            payload = .object(object)
        }
        let record = DurableRecord(
            stream: "payments", key: entry.transactionID.uuidString, payload: payload, admission: admission)
        do {
            try await fleet.publishDurable(record)
            return nil
        } catch {
            logger.error("payment \(entry.transactionID): the fleet outbox refused its record: \(error)")
            return error
        }
    }

    /// After a restart: offers every unsettled payment's acceptance to the
    /// fleet again (the lane may have died between journalling it and
    /// handing it over; the outbox delivers duplicates, consumers drop them).
    func offerUnsettled() async {
        for entry in state.unsettled { await publishDurably(entry, admission: .opening) }
    }

    /// Stops everything: the link, and every waiting pos.pay (as link lost).
    func shutdown() async {
        dropLink()
        for waiter in waiters.values { waiter.yield(.lost("agent stopping")) }
    }
}

/// How a waiting payment ended.
enum PaymentOutcome: Sendable {
    /// The terminal reported a final status (already journalled).
    case final
    /// The link dropped or the deadline passed: the outcome is unknown.
    case lost(String)
}
