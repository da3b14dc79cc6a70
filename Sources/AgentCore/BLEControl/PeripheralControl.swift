import BLE
import ControlProtocol
import GATT
import JSON
import RoleKit
import Synchronization

/// The `peripheral.*` methods over the running peripheral role's manager:
/// the published services, advertising, value updates and subscribers.
/// While no peripheral role runs every method fails with -32011.
public final class PeripheralControl: Sendable {
    private let manager = Mutex<PeripheralManager?>(nil)
    private let watchers = Mutex<[Task<Void, Never>]>([])
    private let bus: EventBus

    /// Methods publishing their events on `bus`.
    public init(bus: EventBus) {
        self.bus = bus
    }

    /// Starts serving `peripheral` (nil: stops serving).
    public func bind(_ peripheral: PeripheralManager?) {
        manager.withLock { $0 = peripheral }
        let old = watchers.withLock { tasks in
            defer { tasks = [] }
            return tasks
        }
        old.forEach { $0.cancel() }
        guard let peripheral else { return }
        let bus = self.bus
        let states = Task {
            for await ble in peripheral.stateUpdates() {
                bus.publish(.state, ["agentState": "ble", "role": "peripheral", "bleState": .string(ble.rawValue)])
            }
        }
        watchers.withLock { $0 = [states] }
    }

    /// `peripheral.update`'s params.
    static let updateParams = ParamSchema.object(
        [.required("characteristic", .uuid), .optional("value", BLEParams.value), .optional("text", BLEParams.text)],
        rules: [.exactlyOne(of: "value", "text")])

    /// Registers every `peripheral.*` method with its params.
    public func register(in registry: MethodRegistry) throws(RegistrationError) {
        try registry.registerBuiltin("peripheral.services", params: .none) { [self] _ in
            let services = try running().services
            return ["services": .array(services.map(Self.json))]
        }
        try registry.registerBuiltin(
            "peripheral.advertising.start",
            params: .object(.optional("localName", .string(maxBytes: 248)), .optional("services", BLEParams.services))
        ) { [self] call in
            let peripheral = try running()
            let data = AdvertisingData(
                serviceUUIDs: call.arguments.uuids("services") ?? [], localName: call.arguments.string("localName"))
            do { try await peripheral.startAdvertising(data) } catch { throw BLEParams.rpc(error) }
            return ["advertising": true]
        }
        try registry.registerBuiltin("peripheral.advertising.stop", params: .none) { [self] _ in
            do { try await running().stopAdvertising() } catch let error as BLEError { throw BLEParams.rpc(error) }
            return ["advertising": false]
        }
        try registry.registerBuiltin("peripheral.update", params: Self.updateParams) { [self] call in
            let peripheral = try running()
            let local = try Self.notifiable(call.arguments.uuid("characteristic"), in: peripheral.services)
            let bytes = BLEParams.bytes(call)
            let count = peripheral.subscribers(of: local).count
            let sent = peripheral.updateValue(bytes, for: local)
            return ["notified": .int(sent ? Int64(count) : 0), "queued": .bool(sent)]
        }
        try registry.registerBuiltin(
            "peripheral.subscribers", params: .object(.optional("characteristic", .uuid))
        ) { [self] call in
            let only = call.arguments.uuid("characteristic")
            let peripheral = try running()
            var rows: [JSON] = []
            for service in peripheral.services {
                for characteristic in service.characteristics where only == nil || characteristic.uuid == only {
                    let local = LocalCharacteristic(service: service.uuid, uuid: characteristic.uuid)
                    for (central, mtu) in peripheral.subscribers(of: local).sorted(by: { $0.key < $1.key }) {
                        rows.append([
                            "id": .string(central.uuidString),
                            "characteristic": .string(characteristic.uuid.uuidString),
                            "mtu": .int(Int64(mtu.value)),
                        ])
                    }
                }
            }
            return ["subscribers": .array(rows)]
        }
    }

    private func running() throws(RPCError) -> PeripheralManager {
        guard let peripheral = manager.withLock({ $0 }) else { throw BLEParams.notRunning("peripheral") }
        return peripheral
    }

    /// The published characteristic `uuid`, which must notify or indicate
    /// (an update is what its subscribers receive): -32020 when none is
    /// published, -32602 when it has neither property.
    static func notifiable(_ uuid: BluetoothUUID?, in services: [GATTService]) throws(RPCError) -> LocalCharacteristic {
        for service in services {
            guard let match = service.characteristics.first(where: { $0.uuid == uuid }) else { continue }
            guard !match.properties.isDisjoint(with: [.notify, .indicate]) else {
                throw RPCError(
                    invalidParams: JSONFieldErrors([
                        JSONFieldError(
                            path: "characteristic",
                            "\(match.uuid.uuidString) neither notifies nor indicates: it has no subscribers to update")
                    ]))
            }
            return LocalCharacteristic(service: service.uuid, uuid: match.uuid)
        }
        throw BLEParams.rpc(
            BLEError(.characteristicNotFound, message: "no published characteristic \(uuid?.uuidString ?? "")"))
    }

    static func json(_ service: GATTService) -> JSON {
        [
            "uuid": .string(service.uuid.uuidString),
            "characteristics": .array(
                service.characteristics.map {
                    ["uuid": .string($0.uuid.uuidString), "properties": BLEParams.properties($0.properties)]
                }),
        ]
    }
}
