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

    /// Registers every `peripheral.*` method.
    public func register(in registry: MethodRegistry) throws(RegistrationError) {
        try registry.registerBuiltin("peripheral.services") { [self] _ in
            let services = try running().services
            return ["services": .array(services.map(Self.json))]
        }
        try registry.registerBuiltin("peripheral.advertising.start") { [self] call in
            let object = try BLEParams.object(call)
            let name = try BLEParams.string(object, "localName", required: false)
            let services = try BLEParams.uuids(object, "services") ?? []
            let peripheral = try running()
            do {
                try await peripheral.startAdvertising(AdvertisingData(serviceUUIDs: services, localName: name))
            } catch { throw BLEParams.rpc(error) }
            return ["advertising": true]
        }
        try registry.registerBuiltin("peripheral.advertising.stop") { [self] _ in
            do { try await running().stopAdvertising() } catch let error as BLEError { throw BLEParams.rpc(error) }
            return ["advertising": false]
        }
        try registry.registerBuiltin("peripheral.update") { [self] call in
            let object = try BLEParams.object(call)
            let uuid = try BLEParams.uuid(object, "characteristic")
            let bytes = try BLEParams.bytes(object)
            let peripheral = try running()
            guard let local = Self.local(uuid, in: peripheral.services) else {
                throw BLEParams.rpc(
                    BLEError(.characteristicNotFound, message: "no published characteristic \(uuid?.uuidString ?? "")"))
            }
            let count = peripheral.subscribers(of: local).count
            let sent = peripheral.updateValue(bytes, for: local)
            return ["notified": .int(sent ? Int64(count) : 0), "queued": .bool(sent)]
        }
        try registry.registerBuiltin("peripheral.subscribers") { [self] call in
            let object = try BLEParams.object(call)
            let only = try BLEParams.uuid(object, "characteristic", required: false)
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

    static func local(_ uuid: BluetoothUUID?, in services: [GATTService]) -> LocalCharacteristic? {
        for service in services {
            if let match = service.characteristics.first(where: { $0.uuid == uuid }) {
                return LocalCharacteristic(service: service.uuid, uuid: match.uuid)
            }
        }
        return nil
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
