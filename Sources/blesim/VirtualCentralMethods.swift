import DBus
import GATT
import SimCore

/// org.blesim.Control1's virtual central: CentralConnect / CentralDisconnect / CentralRead /
/// CentralWrite / CentralSubscribe on an adapter's peripheral role (docs/blesim.md, "Virtual
/// central"), and the `Notification` signal on /org/blesim for what it receives.
struct VirtualCentralMethods: Sendable {
    let host: SimHost
    let local: LocalInterfaces

    private func run<R>(_ body: () throws(BlueZError) -> R) throws -> R {
        do {
            return try body()
        } catch {
            throw DBusMapping.error(error)
        }
    }

    private func adapter(_ value: DBusValue?) throws -> Int {
        guard let name = value?.stringValue, let index = host.read({ $0.peripheralAdapter(named: name) }) else {
            throw ControlInterface.invalid("expected an adapter: hciN, its path or its address")
        }
        return index
    }

    private func uuid(_ value: DBusValue?) throws -> BluetoothUUID {
        guard let text = value?.stringValue, let uuid = BluetoothUUID(text) else {
            throw ControlInterface.invalid("expected a characteristic UUID")
        }
        return uuid
    }

    /// The Device1 path the peripheral's bluetoothd gives the virtual central.
    private func centralPath(_ adapter: Int) -> String {
        "/org/bluez/hci\(adapter)/" + VirtualCentral.address.objectPathComponent
    }

    func methods() throws -> [ExportedMethod] {
        [
            try ExportedMethod("CentralConnect", in: "s", out: "") { call in
                try connect(try adapter(call.arguments().first))
                return []
            },
            try ExportedMethod("CentralDisconnect", in: "s", out: "") { call in
                disconnect(try adapter(call.arguments().first))
                return []
            },
            try ExportedMethod("CentralRead", in: "ss", out: "ay") { call in
                let arguments = try call.arguments()
                let index = try adapter(arguments.first)
                return [.bytes(try await read(index, try uuid(arguments.dropFirst().first)))]
            },
            try ExportedMethod("CentralWrite", in: "ssayb", out: "") { call in
                let arguments = try call.arguments()
                guard arguments.count == 4, let bytes = arguments[2].bytesValue,
                    case .boolean(let withResponse) = arguments[3].unwrapped
                else { throw ControlInterface.invalid("expected (adapter, uuid, value, with response)") }
                let index = try adapter(arguments.first)
                try await write(index, try uuid(arguments[1]), bytes, withResponse: withResponse)
                return []
            },
            try ExportedMethod("CentralSubscribe", in: "ssb", out: "") { call in
                let arguments = try call.arguments()
                guard arguments.count == 3, case .boolean(let on) = arguments[2].unwrapped else {
                    throw ControlInterface.invalid("expected (adapter, uuid, on)")
                }
                let index = try adapter(arguments.first)
                try subscribe(index, try uuid(arguments[1]), on)
                return []
            },
        ]
    }

    // MARK: The operations, shared by Control1 and the scenario's `centrals`

    /// Connects the virtual central to adapter `index`'s applications.
    func connect(_ index: Int) throws {
        try run { () throws(BlueZError) in
            try host.world { world, _ throws(BlueZError) in
                ((), try world.virtualConnect(adapter: index))
            }
        }
    }

    /// Ends the virtual central's link to adapter `index`.
    func disconnect(_ index: Int) {
        var stopped: [LocalAttribute] = []
        host.update { world, _ in
            let (attributes, batches) = world.virtualDisconnect(adapter: index)
            stopped = attributes
            return batches
        }
        for attribute in stopped {
            local.subscriptionChanged(attribute, start: false, central: centralPath(index), mtu: VirtualCentral.mtu)
        }
    }

    /// Reads characteristic `uuid` of adapter `index`'s applications.
    func read(_ index: Int, _ uuid: BluetoothUUID) async throws -> [UInt8] {
        let target = try run { () throws(BlueZError) in
            try host.read { $0 }.virtualTarget(adapter: index, uuid: uuid)
        }
        guard target.flags.properties.contains(.read) else {
            throw DBusMapping.error(BlueZATTErrorMapping.clientError(for: .readNotPermitted))
        }
        let result = await local.call(
            target.attribute, write: nil, offset: 0, mtu: VirtualCentral.mtu, central: centralPath(index))
        switch result {
        case .success(let value): return value
        case .failure(let error): throw DBusMapping.error(BlueZATTErrorMapping.clientError(for: error))
        }
    }

    /// Writes `bytes` to characteristic `uuid`; without response, errors are dropped.
    func write(_ index: Int, _ uuid: BluetoothUUID, _ bytes: [UInt8], withResponse: Bool) async throws {
        let target = try run { () throws(BlueZError) in
            try host.read { $0 }.virtualTarget(adapter: index, uuid: uuid)
        }
        let needed: CharacteristicProperties = withResponse ? .write : .writeWithoutResponse
        guard target.flags.properties.contains(needed) else {
            throw DBusMapping.error(BlueZATTErrorMapping.clientError(for: .writeNotPermitted))
        }
        let result = await local.call(
            target.attribute, write: bytes, offset: 0, mtu: VirtualCentral.mtu, central: centralPath(index))
        if withResponse, case .failure(let error) = result {
            throw DBusMapping.error(BlueZATTErrorMapping.clientError(for: error))
        }
    }

    /// Subscribes (on) or unsubscribes characteristic `uuid`.
    func subscribe(_ index: Int, _ uuid: BluetoothUUID, _ on: Bool) throws {
        let target = try run { () throws(BlueZError) in
            try host.read { $0 }.virtualTarget(adapter: index, uuid: uuid)
        }
        guard target.flags.properties.contains(.notify) || target.flags.properties.contains(.indicate) else {
            throw DBusMapping.error(BluetoothdError.notSupported)
        }
        var tell = false
        host.update { world, _ in
            tell = world.virtualSubscribe(adapter: index, handle: target.handle, on)
            return []
        }
        if tell {
            local.subscriptionChanged(target.attribute, start: on, central: centralPath(index), mtu: VirtualCentral.mtu)
        }
    }
}
