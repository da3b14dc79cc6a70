import BLE
import GATT
import JSON
import RoleKit
import Synchronization

/// The central side: scan counting, and the link to the bench peripheral.
final class BenchCentral: Sendable {
    private struct State {
        var scan: Task<Void, Never>?
        var discoveries = 0
        var reports = 0
        var peripheral: Peripheral?
        var notify: RemoteCharacteristic?
        var write: RemoteCharacteristic?
        var listener: Task<Void, Never>?
        var notifications = LatencyWindow()
    }

    private let central: CentralManager
    private let state = Mutex(State())

    init(central: CentralManager) {
        self.central = central
    }

    func register(_ methods: any PluginMethodRegistrar) throws {
        try methods.register("bench.scan.start", params: .object(.optional("allowDuplicates", .boolean))) {
            [self] call in
            try await startScan(allowDuplicates: call.arguments.bool("allowDuplicates") ?? true)
            return ["scanning": true]
        }
        try methods.register("bench.scan.count", params: .none) { [self] _ in scanCounts() }
        try methods.register("bench.scan.stop", params: .none) { [self] _ in await stopScan() }
        try methods.register("bench.connect", params: .object(.optional("seconds", .integer(1...600)))) {
            [self] call in
            let seconds = call.arguments.int("seconds") ?? 30
            return try await withDeadline(seconds: Double(seconds), "bench.connect") { try await self.connect() }
        }
        try methods.register("bench.notify.subscribe", params: .none) { [self] _ in try await subscribe() }
        try methods.register("bench.notify.window", params: .none) { [self] _ in
            state.withLock { windowJSON(&$0.notifications) }
        }
        try registerRun("bench.write.run", on: methods) { [self] count, rate, seconds in
            try await writes(count: count, rate: rate, seconds: seconds)
        }
    }

    private func poweredOn() async throws {
        _ = try await withDeadline(seconds: 30, "waiting for the adapter") {
            for await state in self.central.stateUpdates() where state == .poweredOn { return true }
            throw BenchError.failed("the central manager's state stream ended").error
        }
    }

    /// One scan without a service filter; each discovery counts once, as the
    /// number of advertisement reports it stands for.
    private func startScan(allowDuplicates: Bool) async throws {
        try await poweredOn()
        _ = await stopScan()
        let stream = try central.scanForPeripherals(options: ScanOptions(allowDuplicates: allowDuplicates))
        let task = Task { [self] in
            for await discovery in stream {
                state.withLock { state in
                    state.discoveries += 1
                    state.reports += discovery.reportCount
                }
            }
        }
        state.withLock { $0.scan = task }
    }

    private func scanCounts() -> JSON {
        state.withLock { ["discoveries": .int(Int64($0.discoveries)), "reports": .int(Int64($0.reports))] }
    }

    private func stopScan() async -> JSON {
        let task = state.withLock { state in
            defer { state.scan = nil }
            return state.scan
        }
        task?.cancel()
        await task?.value
        return scanCounts()
    }

    /// Scans for the bench service, connects to the first peripheral with it
    /// and finds the two characteristics.
    private func connect() async throws -> JSON {
        try await poweredOn()
        let service = try BluetoothUUID(parsing: BenchValue.service)
        var found: Peripheral?
        for await discovery in try central.scanForPeripherals(withServices: [service]) {
            found = central.retrievePeripherals(withIdentifiers: [discovery.identifier]).first
            if found != nil { break }
        }
        guard let peripheral = found else { throw BenchError.failed("the scan ended without a bench peripheral").error }
        try await central.connect(peripheral)
        guard let remote = try await peripheral.discoverServices([service]).first else {
            throw BenchError.failed("the bench service is missing").error
        }
        let uuids = try [BenchValue.notifyCharacteristic, BenchValue.writeCharacteristic].map(
            BluetoothUUID.init(parsing:))
        let characteristics = try await peripheral.discoverCharacteristics(uuids, for: remote)
        let notify = characteristics.first { $0.uuid == uuids[0] }
        let write = characteristics.first { $0.uuid == uuids[1] }
        guard let notify, let write else { throw BenchError.failed("a bench characteristic is missing").error }
        state.withLock { state in
            state.peripheral = peripheral
            state.notify = notify
            state.write = write
        }
        return ["id": .string("\(peripheral.identifier)"), "mtu": .int(Int64(write.mtu?.value ?? 23))]
    }

    private func link() throws -> (Peripheral, RemoteCharacteristic, RemoteCharacteristic) {
        guard
            let (peripheral, notify, write) = state.withLock({ state in
                state.peripheral.flatMap { peripheral in
                    state.notify.flatMap { n in state.write.map { (peripheral, n, $0) } }
                }
            })
        else { throw BenchError.failed("not connected: call bench.connect first").error }
        return (peripheral, notify, write)
    }

    /// Subscribes and starts recording every notification.
    private func subscribe() async throws -> JSON {
        let (peripheral, notify, _) = try link()
        let values = peripheral.notifications(for: notify)
        let listener = Task { [self] in
            for await value in values { state.withLock { $0.notifications.record(value) } }
        }
        state.withLock { state in
            state.listener?.cancel()
            state.listener = listener
        }
        try await peripheral.setNotifyValue(true, for: notify)
        return ["notifying": true]
    }

    /// Writes without response for `seconds` (or `count` writes), at `rate`
    /// a second (0: as fast as the transmit queue takes them).
    private func writes(count: Int, rate: Int, seconds: Double) async throws -> JSON {
        let (peripheral, _, write) = try link()
        var ready = peripheral.readyToSendWriteWithoutResponse().makeAsyncIterator()
        return try await pacedRun(count: count, rate: rate, seconds: seconds) { sequence in
            guard peripheral.canSendWriteWithoutResponse else { return false }
            try await peripheral.writeValue(BenchValue.encode(sequence), for: write, type: .withoutResponse)
            return true
        } wait: {
            _ = await ready.next()
        }
    }
}
