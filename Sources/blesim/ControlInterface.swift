import DBus
import GATT
import PaymentTerminalProfile
import SimCore
import VirtualPaymentTerminal

/// `org.blesim.Control1` on `/org/blesim`: fault injection at run time, outside org.bluez
/// (docs/blesim.md, "Fault injection"). Devices are named by address (`AA:BB:CC:DD:EE:FF`),
/// whether or not an adapter has found them.
struct ControlInterface: Sendable {
    let host: SimHost
    /// The virtual central's methods, when served.
    var central: VirtualCentralMethods? = nil

    /// Where the interface is served.
    static let path = "/org/blesim"
    /// Its name.
    static let name = "org.blesim.Control1"

    func interface() throws -> ExportedInterface {
        try ExportedInterface(
            Self.name,
            methods: [
                ExportedMethod("DropLink", in: "s", out: "") { call in
                    let address = try Self.address(call.arguments().first)
                    _ = apply(.dropLink(address))
                    return []
                },
                ExportedMethod("FailNext", in: "ssuss", out: "") { call in
                    let arguments = try call.arguments()
                    guard arguments.count == 5, case .string(let uuidText) = arguments[1],
                        case .uint32(let count) = arguments[2], case .string(let kind) = arguments[3],
                        case .string(let message) = arguments[4], count > 0
                    else { throw Self.invalid("expected (address, uuid or empty, count > 0, error, message)") }
                    let address = try Self.address(arguments.first)
                    var uuid: BluetoothUUID? = nil
                    if !uuidText.isEmpty {
                        guard let parsed = try? BluetoothUUID(parsing: uuidText) else { throw Self.invalid("bad UUID") }
                        uuid = parsed
                    }
                    let action: FaultPlan.Action =
                        kind == "timeout"
                        ? .timeout
                        : .error(BlueZError(BlueZError.Name(rawValue: kind), message.isEmpty ? nil : message))
                    _ = apply(
                        .failNext(FaultPlan.Rule(address: address, uuid: uuid, remaining: Int(count), action: action)))
                    return []
                },
                ExportedMethod("FailRegistration", in: "suss", out: "") { call in
                    let arguments = try call.arguments()
                    guard arguments.count == 4, case .string(let kind) = arguments[0],
                        kind == "application" || kind == "advertisement", case .uint32(let count) = arguments[1],
                        count > 0, case .string(let name) = arguments[2], case .string(let message) = arguments[3]
                    else { throw Self.invalid("expected (application or advertisement, count > 0, error, message)") }
                    host.refuseRegistrations(
                        kind, count: Int(count),
                        error: BlueZError(BlueZError.Name(rawValue: name), message.isEmpty ? nil : message))
                    return []
                },
                ExportedMethod("SetDelay", in: "sd", out: "") { call in
                    let arguments = try call.arguments()
                    guard arguments.count == 2, case .double(let seconds) = arguments[1], seconds >= 0, seconds <= 600
                    else { throw Self.invalid("expected (address, seconds 0...600)") }
                    let address = try Self.address(arguments.first)
                    _ = apply(.delay(address, seconds: seconds))
                    return []
                },
                ExportedMethod("UnsignalledConnect", in: "s", out: "") { call in
                    let address = try Self.address(call.arguments().first)
                    guard apply(.unsignalledConnect(address)) else { throw Self.unknown(address) }
                    return []
                },
                ExportedMethod("ClearFaults", in: "", out: "") { _ in
                    _ = apply(.clear)
                    return []
                },
                ExportedMethod("Silence", in: "sb", out: "") { call in
                    let arguments = try call.arguments()
                    guard arguments.count == 2, case .boolean(let on) = arguments[1] else {
                        throw Self.invalid("expected (address, silenced)")
                    }
                    let address = try Self.address(arguments.first)
                    guard apply(.silence(address, on)) else { throw Self.unknown(address) }
                    return []
                },
                ExportedMethod("Move", in: "sd", out: "") { call in
                    let arguments = try call.arguments()
                    guard arguments.count == 2, case .double(let distance) = arguments[1] else {
                        throw Self.invalid("expected (address, metres)")
                    }
                    let address = try Self.address(arguments.first)
                    guard apply(.move(address, distance: distance)) else { throw Self.unknown(address) }
                    return []
                },
                ExportedMethod("PowerCycle", in: "u", out: "") { call in
                    guard case .uint32(let index)? = try call.arguments().first else {
                        throw Self.invalid("expected (index)")
                    }
                    // Two signals, as bluetoothd's power off and on are: a client sees Powered false,
                    // then (after the reply) Powered true. Folded into one, the cycle would be invisible.
                    _ = apply(.powered(adapter: Int(index), false))
                    call.flushSignals()
                    _ = apply(.powered(adapter: Int(index), true))
                    return []
                },
                ExportedMethod("TerminalTransactions", in: "s", out: "a(sstssu)") { call in
                    let address = try Self.address(call.arguments().first)
                    var found: [TerminalTransaction]?
                    // Through `update`, so that transactions whose latency has passed are final first.
                    host.update { world, _ in
                        found = world.terminalTransactions(address)
                        return []
                    }
                    guard let found else { throw Self.notTerminal(address) }
                    return [.array(Self.transactionType, found.map(Self.transactionValue))]
                },
            ] + (try central?.methods() ?? []))
    }

    /// Applies `fault` through the world (the implementation scenario faults share); false when
    /// it names no such device or adapter.
    private func apply(_ fault: Fault) -> Bool {
        var applied = false
        host.update { world, _ in
            let (done, batches) = world.apply(fault)
            applied = done
            return batches
        }
        return applied
    }

    /// `(s transactionId, s state, t amount, s currency, s reference, u charges)`.
    static let transactionType = DBusType.structure([.string, .string, .uint64, .string, .string, .uint32])

    static func transactionValue(_ transaction: TerminalTransaction) -> DBusValue {
        .structure([
            .string(transaction.transactionID.uuidString), .string(transaction.status.state.description),
            .uint64(transaction.request.amount), .string(transaction.request.currency.code),
            .string(transaction.request.reference), .uint32(UInt32(clamping: transaction.charges)),
        ])
    }

    static func notTerminal(_ address: DeviceAddress) -> DBusError {
        DBusError(DBusError.Name(rawValue: "org.blesim.Error.UnknownDevice"), "no virtual payment terminal \(address)")
    }

    static func address(_ value: DBusValue?) throws -> DeviceAddress {
        guard case .string(let text)? = value, let address = DeviceAddress(text) else {
            throw invalid("expected an address AA:BB:CC:DD:EE:FF")
        }
        return address
    }

    static func invalid(_ message: String) -> DBusError {
        DBusError(DBusError.Name(rawValue: "org.blesim.Error.InvalidArguments"), message)
    }

    static func unknown(_ address: DeviceAddress) -> DBusError {
        DBusError(DBusError.Name(rawValue: "org.blesim.Error.UnknownDevice"), "no virtual device \(address)")
    }
}
