import BLE
import GATT
import JSON
import PaymentTerminalProfile
import RoleKit
import VirtualPaymentTerminal

/// The virtual payment terminal at run time: one actor owns the
/// ``VirtualTerminal`` logic, answers ATT requests from it, indicates the
/// statuses it returns (flow controlled), finalises pending transactions at
/// its next deadline (one timer task, re-armed after each change) and saves
/// its snapshot (idempotency records, charges) after every change.
actor VirtualTerminalNode {
    static let snapshotName = "terminal.json"
    private var terminal: VirtualTerminal
    private let manager: PeripheralManager?
    private let state: PluginStateStore
    private let logger: PluginLogger
    private let events: any PluginEventSink
    private let clock = ContinuousClock()
    private let start: ContinuousClock.Instant
    private var timer: Task<Void, Never>?
    /// Set by ``shutdown()``: work suspended across it (a save) does not arm the timer again.
    private var stopped = false
    /// Statuses the transmit queue refused, oldest first (at most ``waitingLimit``).
    private var waiting: [[UInt8]] = []
    private static let waitingLimit = 64
    private var published = false
    private let status = LocalCharacteristic(
        service: PaymentTerminalProfile.serviceUUID, uuid: PaymentTerminalProfile.transactionStatusUUID)

    init(
        config: VirtualTerminalConfig, manager: PeripheralManager?, state: PluginStateStore, logger: PluginLogger,
        events: any PluginEventSink
    ) {
        start = clock.now
        self.manager = manager
        self.state = state
        self.logger = logger
        self.events = events
        terminal = VirtualTerminal(config: config)
    }

    /// Restores the transactions from the snapshot (read on the blocking pool); call once, before serving.
    func restore() async {
        do {
            if let bytes = try await state.read(Self.snapshotName) {
                let json = try JSON(parsing: String(decoding: bytes, as: UTF8.self))
                terminal = try VirtualTerminal(config: terminal.config, restoring: json, at: .zero)
                logger.info("restored \(terminal.transactionCount) transactions")
            }
        } catch {
            logger.warning("snapshot \(Self.snapshotName) unreadable (\(error)); starting with no transactions")
        }
    }

    private var now: Duration { clock.now - start }

    /// Publishes the services and the advertisement once poweredOn.
    func publish() async {
        guard let manager, !published else { return }
        do {
            for service in terminal.services { try await manager.add(service) }
            var data = terminal.advertisement.advertising
            var named = data
            named.localName = terminal.config.name
            if (try? PeripheralManager.checkFits(named, extended: false)) != nil { data = named }
            try await manager.startAdvertising(data)
            published = true
            logger.info("published the Payment Terminal Service as \"\(terminal.config.name)\"")
        } catch {
            logger.error("cannot publish: \(error)")
        }
    }

    /// One ATT request.
    func handle(_ request: ATTRequest) async {
        let uuid = request.characteristic.uuid
        if request.isRead {
            let value: [UInt8]? =
                switch uuid {
                case PaymentTerminalProfile.terminalInfoUUID: terminal.terminalInfoValue
                case .batteryLevel: terminal.batteryLevelValue
                default: terminal.services.lazy.compactMap { $0.characteristic(uuid)?.value }.first
                }
            guard let value else {
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
        let statuses: [TransactionStatus]
        do throws(ATTError) {
            switch uuid {
            case PaymentTerminalProfile.paymentRequestUUID:
                statuses = try terminal.receivePaymentRequest(request.value, at: now)
            case PaymentTerminalProfile.statusQueryUUID:
                statuses = try terminal.receiveStatusQuery(request.value, at: now)
            default: throw ATTError.writeNotPermitted
            }
        } catch {
            logger.warning("write to \(uuid.shortString) refused (\(error)) from \(request.central)")
            _ = request.respond(withError: error)
            return
        }
        _ = request.respond()
        await save()
        indicate(statuses)
        rearm()
    }

    /// The transmit queue drained.
    func transmitReady() {
        let pending = waiting
        waiting = []
        for bytes in pending { send(bytes) }
    }

    /// `terminal.status`: transactions, charges, the waiting indications.
    func report() -> JSON {
        [
            "name": .string(terminal.config.name), "transactions": .int(Int64(terminal.transactionCount)),
            "charges": .int(Int64(terminal.ledger.totalCharges)), "waitingIndications": .int(Int64(waiting.count)),
        ]
    }

    /// Saves and stops the timer.
    func shutdown() async {
        stopped = true
        timer?.cancel()
        timer = nil
        await save()
    }

    private func indicate(_ statuses: [TransactionStatus]) {
        for status in statuses {
            events.emit(
                "status", ["transactionId": .string("\(status.transactionID)"), "state": .string("\(status.state)")])
            send(status.encoded())
        }
    }

    private func send(_ bytes: [UInt8]) {
        guard let manager else { return }
        guard waiting.isEmpty, manager.updateValue(bytes, for: status) else {
            if waiting.count == Self.waitingLimit {
                waiting.removeFirst()
                logger.warning("indication queue full: dropped the oldest (a lane can query the status)")
            }
            waiting.append(bytes)
            return
        }
    }

    private func rearm() {
        guard !stopped else { return }
        timer?.cancel()
        guard let deadline = terminal.nextDeadline else {
            timer = nil
            return
        }
        let delay = max(.zero, deadline - now)
        timer = Task {
            guard (try? await Task.sleep(for: delay)) != nil else { return }
            await self.fire()
        }
    }

    private func fire() async {
        let settled = terminal.advance(to: now)
        if !settled.isEmpty { await save() }
        indicate(settled)
        rearm()
    }

    /// Writes the snapshot on the blocking pool; saves reach the disk in the order they were made.
    private func save() async {
        let text = terminal.snapshot(at: now).serialized()
        do throws(PluginStateError) {
            try await state.write(Self.snapshotName, Array(text.utf8))
        } catch {
            logger.error("cannot save \(Self.snapshotName): \(error)")
        }
    }
}
