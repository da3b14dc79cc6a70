import BLE
import GATT
import JSON
import PaymentTerminalProfile

/// The link to the chosen terminal: the task that connects (and reconnects
/// with backoff) and, once set up, the session's characteristics.
struct TerminalLink {
    /// The table id (peripheral identifier text) of the terminal.
    var key: String
    var identifier: PeripheralIdentifier
    /// Connects, sets up and reconnects; cancelled when the choice moves.
    var task: Task<Void, Never>
    /// Set once connected and set up; nil while the link is down.
    var session: TerminalSession?
}

/// A connected, set-up terminal.
struct TerminalSession: Sendable {
    var peripheral: Peripheral
    /// Terminal Info's terminal id: the journal's `terminal`.
    var terminalID: String
    var paymentRequest: RemoteCharacteristic
    var statusQuery: RemoteCharacteristic
    var statusListener: Task<Void, Never>
}

/// A terminal that cannot serve the profile.
struct TerminalSetupError: Error, CustomStringConvertible {
    var description: String
}

extension ScannerEngine {
    func startLink(key: String, identifier: PeripheralIdentifier) {
        let task = Task { [weak self] in
            guard let self else { return }
            await self.runLink(key: key, identifier: identifier)
        }
        link = TerminalLink(key: key, identifier: identifier, task: task, session: nil)
    }

    /// Ends the link to the chosen terminal (the choice moved or the plugin stops).
    func dropLink() {
        guard let old = link else { return }
        link = nil
        old.task.cancel()
        linkDown(old, why: "terminal deselected")
        let central = self.central
        Task {
            if let peripheral = central.retrievePeripherals(withIdentifiers: [old.identifier]).first {
                try? await central.cancelConnection(peripheral)
            }
        }
    }

    /// Connects, sets up, waits for the link to drop, and again, with backoff.
    private func runLink(key: String, identifier: PeripheralIdentifier) async {
        var backoff = Duration.milliseconds(250)
        while !Task.isCancelled, link?.key == key {
            let connections = central.connectionEvents()
            do {
                guard let peripheral = central.retrievePeripherals(withIdentifiers: [identifier]).first else {
                    throw TerminalSetupError(description: "the terminal is not known to the manager")
                }
                if peripheral.state != .connected { try await central.connect(peripheral) }
                guard link?.key == key, !Task.isCancelled else { return }
                try await setUp(peripheral, key: key)
                backoff = .milliseconds(250)
                for await event in connections {
                    if case .disconnected(let id, _) = event, id == identifier { break }
                }
                guard !Task.isCancelled, let current = link, current.key == key else { return }
                logger.warning("link to \(describe(key)) lost; reconnecting")
                events.emit("terminal-disconnected", ["terminal": .string(key)])
                linkDown(current, why: "link lost")
                link?.session = nil
            } catch {
                guard !Task.isCancelled, let current = link, current.key == key else { return }
                logger.warning("terminal \(describe(key)): \(error); retrying in \(backoff)")
                linkDown(current, why: "link lost")
                link?.session = nil
            }
            try? await Task.sleep(for: backoff)
            backoff = min(backoff * 2, .seconds(10))
        }
    }

    /// Discovers the profile, checks the MTU, reads Terminal Info and the
    /// battery, subscribes to Transaction Status and reconciles.
    private func setUp(_ peripheral: Peripheral, key: String) async throws {
        let services = try await peripheral.discoverServices()
        guard let service = services.first(where: { $0.uuid == PaymentTerminalProfile.serviceUUID }) else {
            throw TerminalSetupError(description: "no Payment Terminal service")
        }
        let characteristics = try await peripheral.discoverCharacteristics(nil, for: service)
        func characteristic(_ uuid: BluetoothUUID, _ name: String) throws -> RemoteCharacteristic {
            guard let found = characteristics.first(where: { $0.uuid == uuid }) else {
                throw TerminalSetupError(description: "no \(name) characteristic")
            }
            return found
        }
        let infoCharacteristic = try characteristic(PaymentTerminalProfile.terminalInfoUUID, "Terminal Info")
        let request = try characteristic(PaymentTerminalProfile.paymentRequestUUID, "Payment Request")
        let status = try characteristic(PaymentTerminalProfile.transactionStatusUUID, "Transaction Status")
        let query = try characteristic(PaymentTerminalProfile.statusQueryUUID, "Status Query")
        if let mtu = status.mtu, mtu.value < PaymentTerminalProfile.minimumATTMTU {
            throw TerminalSetupError(
                description: "ATT MTU \(mtu.value) is below the profile's \(PaymentTerminalProfile.minimumATTMTU)")
        }
        let info = try TerminalInfo(decoding: try await peripheral.readValue(for: infoCharacteristic))
        table.setInfo(info, for: key)
        var battery: UInt8?
        if let batteryService = services.first(where: { $0.uuid == .battery }),
            let level = try await peripheral.discoverCharacteristics([.batteryLevel], for: batteryService).first
        {
            battery = try? PaymentTerminalProfile.decodeBatteryLevel(try await peripheral.readValue(for: level))
            if let battery { table.setBatteryLevel(battery, for: key) }
        }
        // A fresh subscription on every link: after a reconnect the manager restores the wanted
        // subscription in the background, and setNotifyValue(true) alone would return before
        // the StartNotify, so a status query's answer could be indicated to nobody.
        if peripheral.isNotifying(status) { try? await peripheral.setNotifyValue(false, for: status) }
        try await peripheral.setNotifyValue(true, for: status)
        // Indications that came since the subscription wait for this stream.
        let indications = peripheral.notifications(for: status)
        let terminalID = info.terminalID
        let listener = Task { [weak self] in
            for await value in indications {
                guard let self else { return }
                await self.received(value, from: terminalID)
            }
        }
        guard link?.key == key else {
            listener.cancel()
            return
        }
        link?.session = TerminalSession(
            peripheral: peripheral, terminalID: terminalID, paymentRequest: request, statusQuery: query,
            statusListener: listener)
        logger.info(
            "connected to \(describe(key)): terminal \(terminalID), \(info.vendor) \(info.model) \(info.firmware), "
                + "battery \(battery.map { "\($0)%" } ?? "unknown")")
        events.emit(
            "terminal-connected",
            [
                "terminal": .string(key), "terminalId": .string(terminalID), "vendor": .string(info.vendor),
                "model": .string(info.model), "battery": battery.map { .int(Int64($0)) } ?? .null,
            ])
        await reconcile(terminalID: terminalID)
    }

    /// The link is gone: its listener stops and waiting payments learn it.
    func linkDown(_ old: TerminalLink, why: String) {
        old.session?.statusListener.cancel()
        guard let terminalID = old.session?.terminalID else { return }
        for (id, waiter) in waiters where state.payments[id]?.terminal == terminalID {
            waiter.yield(.lost(why))
        }
    }
}
