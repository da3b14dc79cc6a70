import BLE
import GATT
import JSON
import RoleKit
import Synchronization

/// The peripheral side: the bench service, notifications at a rate, and the
/// writes received.
final class BenchPeripheral: Sendable {
    private struct State {
        var published = false
        var writes = LatencyWindow()
    }

    private let manager: PeripheralManager
    private let logger: PluginLogger
    private let state = Mutex(State())
    private let notify: LocalCharacteristic

    init(manager: PeripheralManager, logger: PluginLogger) {
        self.manager = manager
        self.logger = logger
        // Constant, valid UUID strings (BenchValue).
        notify = LocalCharacteristic(
            service: BluetoothUUID(BenchValue.service)!, uuid: BluetoothUUID(BenchValue.notifyCharacteristic)!)
    }

    /// Publishes once poweredOn, and answers requests (records each write).
    func start() -> [Task<Void, Never>] {
        let requests = manager.requests()
        let states = manager.stateUpdates()
        return [
            Task { [self] in
                for await request in requests {
                    if request.isRead {
                        _ = request.respond(with: [])
                    } else {
                        state.withLock { $0.writes.record(request.value) }
                        _ = request.respond()
                    }
                }
            },
            Task { [self] in
                for await state in states where state == .poweredOn { await publish() }
            },
        ]
    }

    private func publish() async {
        guard !state.withLock({ $0.published }) else { return }
        let service = notify.service
        let write = BluetoothUUID(BenchValue.writeCharacteristic)!
        do {
            try await manager.add(
                GATTService(
                    uuid: service,
                    characteristics: [
                        GATTCharacteristic(uuid: notify.uuid, properties: [.read, .notify]),
                        GATTCharacteristic(uuid: write, properties: [.writeWithoutResponse]),
                    ]))
            try await manager.startAdvertising(AdvertisingData(serviceUUIDs: [service]))
            state.withLock { $0.published = true }
            logger.info("published the bench service")
        } catch {
            logger.error("cannot publish the bench service: \(error)")
        }
    }

    func register(_ methods: any PluginMethodRegistrar) throws {
        try methods.register("bench.state", params: .none) { [self] _ in
            [
                "published": .bool(state.withLock { $0.published }),
                "subscribers": .int(Int64(manager.subscribers(of: notify).count)),
            ]
        }
        try methods.register("bench.write.window", params: .none) { [self] _ in
            state.withLock { windowJSON(&$0.writes) }
        }
        try registerRun("bench.notify.run", on: methods) { [self] count, rate, seconds in
            try await notifications(count: count, rate: rate, seconds: seconds)
        }
    }

    /// Notifies for `seconds` (or `count` values), at `rate` a second (0: as
    /// fast as the transmit queue takes them).
    private func notifications(count: Int, rate: Int, seconds: Double) async throws -> JSON {
        var ready = manager.readyToUpdate().makeAsyncIterator()
        return try await pacedRun(count: count, rate: rate, seconds: seconds) { sequence in
            manager.updateValue(BenchValue.encode(sequence), for: notify)
        } wait: {
            _ = await ready.next()
        }
    }
}
