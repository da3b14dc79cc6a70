import GATT
import JSON
import PaymentTerminalProfile
import VirtualPaymentTerminal

/// A scenario device of kind "virtual payment terminal": its GATT database is the Payment
/// Terminal profile's (`PaymentTerminalProfile.services`: the terminal service, Device
/// Information, Battery) and `VirtualTerminal` answers its Payment Request and Status Query
/// writes with Transaction Status indications.
extension Scenario {
    static func parsePaymentTerminal(_ field: ScenarioField) throws(ScenarioError) -> VirtualTerminal {
        do {
            return VirtualTerminal(config: try VirtualTerminalConfig(json: field.value))
        } catch {
            // The scenario reports one problem per field: the first.
            let first = error.errors.first ?? JSONFieldError(path: "", "invalid")
            throw ScenarioError(path: first.path.isEmpty ? field.path : field.child(first.path), message: first.message)
        }
    }
}

extension GATTDatabaseSpec {
    /// The database a virtual terminal serves: the profile's services with the terminal's
    /// values (Terminal Info, Battery Level), in the profile's order.
    public init(terminal: VirtualTerminal) {
        self.init(services: terminal.services.map { GATTServiceSpec(model: $0, terminal: terminal) })
    }
}

extension GATTServiceSpec {
    /// A scenario service from the GATT module's model (`GATTService`).
    init(model: GATTService, terminal: VirtualTerminal) {
        self.init(
            uuid: model.uuid, primary: model.isPrimary,
            characteristics: model.characteristics.map { chrc in
                var value = chrc.value ?? []
                if chrc.uuid == PaymentTerminalProfile.terminalInfoUUID { value = terminal.terminalInfoValue }
                if chrc.uuid == .batteryLevel { value = terminal.batteryLevelValue }
                return GATTCharacteristicSpec(
                    uuid: chrc.uuid,
                    flags: BlueZGATTFlags.Characteristic(
                        properties: chrc.properties, extendedProperties: chrc.extendedProperties,
                        permissions: chrc.permissions),
                    value: value,
                    descriptors: chrc.descriptors.filter { $0.uuid != GATTServer.cccdUUID }.map {
                        GATTDescriptorSpec(uuid: $0.uuid, value: $0.value ?? [])
                    })
            })
    }
}

extension SimWorld {
    /// A write to a virtual terminal's Payment Request or Status Query: the terminal's answer
    /// (an ATT error) or the Transaction Status indications it sends, on every link to it.
    mutating func terminalWrite(
        device index: Int, characteristic uuid: BluetoothUUID, _ bytes: [UInt8], at now: SimInstant
    ) throws(ATTError) -> [Batch] {
        guard var terminal = terminals[index] else { return [] }
        let time = Duration.nanoseconds(now.nanoseconds)
        let statuses: [TransactionStatus]
        switch uuid {
        case PaymentTerminalProfile.paymentRequestUUID: statuses = try terminal.receivePaymentRequest(bytes, at: time)
        case PaymentTerminalProfile.statusQueryUUID: statuses = try terminal.receiveStatusQuery(bytes, at: time)
        default: return []
        }
        terminals[index] = terminal
        return indicate(statuses, device: index)
    }

    /// Runs the virtual terminals to `now`: transactions that became final are indicated.
    mutating func advanceTerminals(to now: SimInstant) -> [Batch] {
        var batches: [Batch] = []
        for index in terminals.keys.sorted() {
            guard var terminal = terminals[index] else { continue }
            let statuses = terminal.advance(to: .nanoseconds(now.nanoseconds))
            terminals[index] = terminal
            batches += indicate(statuses, device: index)
        }
        return batches
    }

    /// When the next virtual terminal transaction becomes final.
    var nextTerminalDeadline: SimInstant? {
        terminals.values.compactMap(\.nextDeadline).map { duration in
            let (seconds, attoseconds) = duration.components
            return SimInstant(nanoseconds: seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        }.min()
    }

    private mutating func indicate(_ statuses: [TransactionStatus], device index: Int) -> [Batch] {
        guard !statuses.isEmpty, var server = servers[index],
            let handle = server.services.flatMap(\.characteristics).first(where: {
                $0.uuid == PaymentTerminalProfile.transactionStatusUUID
            })?.valueHandle
        else { return [] }
        var batches: [Batch] = []
        for status in statuses {
            let value = status.encoded()
            try? server.write(handle, value)
            servers[index] = server
            for key in links(of: devices[index].address) {
                let events = notify(key, server, handle, value)
                if !events.isEmpty { batches.append(Batch(adapter: key.adapter, events: events)) }
            }
        }
        return batches
    }
}
