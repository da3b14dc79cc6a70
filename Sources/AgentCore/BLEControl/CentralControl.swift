import BLE
import ControlProtocol
import GATT
import IO
import JSON
import RoleKit
import Synchronization

/// The `central.*` methods over the running central role's manager: a scan
/// the control API owns (its discoveries fill the device table and become
/// `discovered` events), connections, GATT reads, writes and subscriptions
/// (whose values become `value` events). Bound to a manager when the central
/// role starts, unbound when it stops; while unbound every method fails with
/// -32011.
///
/// A device connected through `central.connect` stays wanted until
/// `central.disconnect`: when its link is lost (the peer or the air dropped it;
/// BlueZ does not reconnect an unbonded LE device by itself) the manager
/// connects it again with its backoff (`ReconnectPolicy`) and restores its
/// subscriptions on the new link.
///
/// The device table is bounded (``DeviceTable``: 16,384 rows, each kept while
/// the manager holds its device, else 30 s after its last discovery); the scan's discoveries come coalesced per device when the
/// table and the event bus fall behind (``DiscoveryStream``), and
/// `central.stats` reports what was merged, dropped and expired.
public final class CentralControl: Sendable {
    /// The control API's own scan: its task and the stream of its current scan.
    struct ControlScan: Sendable {
        var task: Task<Void, Never>
        var stream: DiscoveryStream?
    }

    /// What the control API's scans handled since the central role started.
    struct ScanCounts: Sendable, Hashable {
        var discoveries = 0
        var reports = 0
        var scans = 0
    }

    struct State: Sendable {
        var central: CentralManager?
        var scan: ControlScan?
        var devices: DeviceTable
        var counts = ScanCounts()
        /// The value forwarders of `central.subscribe`d characteristics.
        var subscriptions: [CharacteristicReference: Task<Void, Never>] = [:]
        var watchers: [Task<Void, Never>] = []
        /// What restoration found when the manager was bound (agent.status).
        var restored: JSON?
        /// Writes the control API's subscription record (made at the first save).
        var recordWriter: CoalescingWriter<Void>?
    }

    let state: Mutex<State>
    let bus: EventBus
    private let clock: any BLEClock
    private let table: @Sendable () -> DeviceTable

    /// Methods publishing their events on `bus`; the device table keeps at
    /// most `tableCapacity` rows, each for `tableExpiry` after its last
    /// discovery, on `clock`.
    public init(
        bus: EventBus, tableCapacity: Int = 16_384, tableExpiry: Duration = .seconds(30),
        clock: any BLEClock = SystemBLEClock()
    ) {
        self.bus = bus
        self.clock = clock
        let table = { @Sendable in DeviceTable(capacity: tableCapacity, expiry: tableExpiry) }
        self.table = table
        self.state = Mutex(State(devices: table()))
    }

    /// Starts serving `central` (nil: stops serving; scans and value streams end).
    public func bind(_ central: CentralManager?) {
        let fresh = table()
        let old = state.withLock { state in
            defer { state = State(central: central, devices: fresh) }
            return state
        }
        old.scan?.task.cancel()
        old.subscriptions.values.forEach { $0.cancel() }
        old.watchers.forEach { $0.cancel() }
        guard let central else { return }
        restoreSubscriptions(of: central)
        let bus = self.bus
        let connections = Task {
            for await event in central.connectionEvents() {
                switch event {
                case .connected(let id): bus.publish(.connected, ["id": .string(id.uuidString)])
                case .failedToConnect(let id, let error):
                    bus.publish(.disconnected, ["id": .string(id.uuidString), "error": .string("\(error)")])
                case .disconnected(let id, let error):
                    bus.publish(
                        .disconnected, ["id": .string(id.uuidString), "error": error.map { .string("\($0)") } ?? .null])
                }
            }
        }
        let states = Task {
            for await ble in central.stateUpdates() {
                bus.publish(.state, ["agentState": "ble", "role": "central", "bleState": .string(ble.rawValue)])
            }
        }
        state.withLock { $0.watchers = [connections, states] }
    }

    /// `central.scan.start`'s params (BlueZ's discovery filter takes an RSSI from -127 to 20 dBm).
    static let scanParams = ParamSchema.object(
        .optional("services", BLEParams.services), .optional("allowDuplicates", .boolean),
        .optional("rssiThreshold", .integer(-127...20)), .optional("namePattern", .string(maxBytes: 248)),
        .optional("durationSeconds", .integer(1...86_400)))

    /// `central.write`'s params.
    static let writeParams = ParamSchema.object(
        [
            .required("id", BLEParams.deviceID), .optional("service", .uuid), .required("characteristic", .uuid),
            .optional("value", BLEParams.value), .optional("text", BLEParams.text),
            .optional("withResponse", .boolean),
        ], rules: [.exactlyOne(of: "value", "text")])

    /// Registers every `central.*` method with its params.
    public func register(in registry: MethodRegistry) throws(RegistrationError) {
        try registry.registerBuiltin("central.scan.start", params: Self.scanParams) { [self] call in
            try await scanStart(call)
        }
        try registry.registerBuiltin("central.scan.stop", params: .none) { [self] _ in
            let (_, task) = try running(stoppingScan: true)
            if let task { scanEnded(task, reason: "stopped") }
            return ["scanning": false]
        }
        try registry.registerBuiltin("central.devices", params: .none) { [self] _ in devices(try running().0) }
        try registry.registerBuiltin("central.stats", params: .none) { [self] _ in stats(try running().0) }
        try registry.registerBuiltin("central.connect", params: BLEParams.device) { [self] call in
            let (central, peripheral) = try peripheral(call)
            do { try await central.connect(peripheral) } catch { throw BLEParams.rpc(error) }
            return ["id": .string(peripheral.identifier.uuidString), "connected": true]
        }
        try registry.registerBuiltin("central.disconnect", params: BLEParams.device) { [self] call in
            let (central, peripheral) = try peripheral(call)
            do { try await central.cancelConnection(peripheral) } catch { throw BLEParams.rpc(error) }
            return ["id": .string(peripheral.identifier.uuidString), "connected": false]
        }
        try registry.registerBuiltin("central.services", params: BLEParams.device) { [self] call in
            try await services(call)
        }
        try registry.registerBuiltin("central.read", params: BLEParams.characteristic) { [self] call in
            let (peripheral, characteristic) = try await characteristic(call)
            do {
                return ["value": .string(BLEParams.hex(try await peripheral.readValue(for: characteristic)))]
            } catch { throw BLEParams.rpc(error) }
        }
        try registry.registerBuiltin("central.write", params: Self.writeParams) { [self] call in
            let bytes = BLEParams.bytes(call)
            let withResponse = call.arguments.bool("withResponse") ?? true
            let (peripheral, characteristic) = try await characteristic(call)
            do {
                try await peripheral.writeValue(
                    bytes, for: characteristic, type: withResponse ? .withResponse : .withoutResponse)
            } catch { throw BLEParams.rpc(error) }
            return ["written": .int(Int64(bytes.count))]
        }
        try registry.registerBuiltin("central.subscribe", params: BLEParams.characteristic) { [self] call in
            try await subscribe(call, true)
        }
        try registry.registerBuiltin("central.unsubscribe", params: BLEParams.characteristic) { [self] call in
            try await subscribe(call, false)
        }
    }

    private func running(stoppingScan: Bool = false) throws(RPCError) -> (CentralManager, Task<Void, Never>?) {
        let found = state.withLock { state -> (CentralManager, Task<Void, Never>?)? in
            guard let central = state.central else { return nil }
            let task = state.scan?.task
            if stoppingScan { state.scan = nil }
            return (central, task)
        }
        guard let found else { throw BLEParams.notRunning("central") }
        return found
    }

    /// How long `central.scan.start` waits for a state that is not known yet (`unknown`, `resetting`) to become known.
    static let stateSettleTimeout = Duration.seconds(10)

    /// Returns once `central`'s state is known (neither `unknown` nor `resetting`), or after `timeout`.
    private static func settle(_ central: CentralManager, within timeout: Duration) async {
        func isTransient(_ state: ManagerState) -> Bool { state == .unknown || state == .resetting }
        guard isTransient(central.currentState) else { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await state in central.stateUpdates() where !isTransient(state) { return }
            }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    private func scanStart(_ call: MethodCall) async throws -> JSON {
        let services = call.arguments.uuids("services")
        var options = ScanOptions()
        options.allowDuplicates = call.arguments.bool("allowDuplicates") ?? false
        options.rssiThreshold = call.arguments.int("rssiThreshold").map { Int($0) }
        options.namePattern = call.arguments.string("namePattern")
        let duration = call.arguments.int("durationSeconds")
        // Just after start-up (or while bluetoothd restarts) the adapter's state is not known yet: a scan asked for
        // then waits for it, as the caller would have to, instead of failing with a state that is about to change.
        await Self.settle(try running().0, within: Self.stateSettleTimeout)
        let (central, previous) = try running(stoppingScan: true)
        if let previous { scanEnded(previous, reason: "replaced") }
        if let refusal = central.currentState.refusal { throw BLEParams.rpc(refusal) }
        let bus = self.bus
        let clock = self.clock
        // The scan lasts across power cycles and bluetoothd restarts: scanWhilePoweredOn starts it again.
        let task = Task { [weak self] in
            await central.scanWhilePoweredOn(
                withServices: services, options: options,
                onChange: { event in
                    switch event {
                    case .scanning: bus.publish(.state, ["agentState": "scan", "scanning": true])
                    case .refused(let error):
                        bus.publish(.state, ["agentState": "scan", "scanning": false, "reason": .string("\(error)")])
                    case .ended(let end) where end != .stopped:
                        bus.publish(.state, ["agentState": "scan", "scanning": false, "reason": .string(end.rawValue)])
                    case .ended: break
                    }
                },
                onScan: { stream in self?.state.withLock { $0.scan?.stream = stream } }
            ) { found in
                self?.state.withLock { state in
                    state.devices.record(
                        found.identifier,
                        .init(found),
                        now: clock.now)
                    state.counts.discoveries += 1
                    state.counts.reports += found.reportCount
                }
                bus.publish(.discovered) {
                    Self.json(
                        found.identifier, name: found.name, rssi: found.measuredRSSI, connected: nil,
                        reports: found.reportCount
                    )
                }
            }
        }
        state.withLock { state in
            state.scan = ControlScan(task: task, stream: nil)
            state.counts.scans += 1
        }
        if let seconds = duration {
            Task { [weak self] in
                try? await Task.sleep(for: .seconds(seconds))
                // Only this scan: a later central.scan.start replaced it and owns its own duration.
                let mine = self?.state.withLock { state -> Bool in
                    guard state.scan?.task == task else { return false }
                    state.scan = nil
                    return true
                }
                if mine == true { self?.scanEnded(task, reason: "duration") }
            }
        }
        return ["scanning": true, "durationSeconds": duration.map(JSON.int) ?? .null]
    }

    private func devices(_ central: CentralManager) -> JSON {
        let connected = Set(central.retrieveConnectedPeripherals(withServices: []).map(\.identifier))
        let now = clock.now
        // Asked outside the table's lock: the manager has a lock of its own.
        let due = state.withLock { $0.devices.due(now: now) }
        let held = due.isEmpty ? [] : Set(central.retrievePeripherals(withIdentifiers: due).map(\.identifier))
        let rows = state.withLock { state in
            state.devices.expire(now: now, keeping: held.union(connected))
            return state.devices.sorted
        }
        return [
            "devices": .array(
                rows.map {
                    Self.json($0.key, name: $0.value.name, rssi: $0.value.rssi, connected: connected.contains($0.key))
                })
        ]
    }

    static func json(
        _ id: PeripheralIdentifier, name: String?, rssi: Int?, connected: Bool?, reports: Int? = nil
    )
        -> JSON
    {
        // One allocation per row: a listing has one for every device.
        var object = JSONObject()
        object.reserveCapacity(4)
        object["id"] = .string(id.uuidString)
        object["name"] = name.map(JSON.string) ?? .null
        object["rssi"] = rssi.map { .int(Int64($0)) } ?? .null
        if let connected { object["connected"] = .bool(connected) }
        if let reports { object["reports"] = .int(Int64(reports)) }
        return .object(object)
    }

    private func peripheral(_ call: MethodCall) throws -> (CentralManager, Peripheral) {
        let (central, _) = try running()
        guard let id = BLEParams.identifier(call),
            let peripheral = central.retrievePeripherals(withIdentifiers: [id]).first
        else {
            throw RPCError(
                invalidParams: JSONFieldErrors([
                    JSONFieldError(path: "id", "no device \(call.arguments.string("id") ?? "") is known (scan first)")
                ]))
        }
        return (central, peripheral)
    }

    private func discovered(_ peripheral: Peripheral) async throws -> [(RemoteService, [RemoteCharacteristic])] {
        do {
            var result: [(RemoteService, [RemoteCharacteristic])] = []
            for service in try await peripheral.discoverServices() {
                result.append((service, try await peripheral.discoverCharacteristics(nil, for: service)))
            }
            return result
        } catch { throw BLEParams.rpc(error) }
    }

    private func services(_ call: MethodCall) async throws -> JSON {
        let (_, peripheral) = try peripheral(call)
        let services = try await discovered(peripheral)
        return [
            "id": .string(peripheral.identifier.uuidString),
            "services": .array(
                services.map { service, characteristics in
                    [
                        "uuid": .string(service.uuid.uuidString),
                        "characteristics": .array(
                            characteristics.map {
                                [
                                    "uuid": .string($0.uuid.uuidString),
                                    "properties": BLEParams.properties($0.properties),
                                ]
                            }),
                    ]
                }),
        ]
    }

    private func characteristic(_ call: MethodCall) async throws -> (Peripheral, RemoteCharacteristic) {
        let serviceUUID = call.arguments.uuid("service")
        let uuid = call.arguments.uuid("characteristic")
        let (_, peripheral) = try peripheral(call)
        for (service, characteristics) in try await discovered(peripheral)
        where serviceUUID == nil || service.uuid == serviceUUID {
            if let match = characteristics.first(where: { $0.uuid == uuid }) { return (peripheral, match) }
        }
        throw BLEParams.rpc(
            BLEError(
                .characteristicNotFound, message: "no characteristic \(call.arguments.string("characteristic") ?? "")"))
    }

    private func subscribe(_ call: MethodCall, _ enable: Bool) async throws -> JSON {
        let (peripheral, characteristic) = try await characteristic(call)
        let (central, _) = try running()
        let reference = characteristic.reference
        if enable {
            // Values that arrive before the forwarder listens wait for it (the manager holds them).
            do { try await peripheral.setNotifyValue(true, for: characteristic) } catch { throw BLEParams.rpc(error) }
            let forwarder = forward(central, reference)
            state.withLock { state in
                state.subscriptions[reference]?.cancel()
                state.subscriptions[reference] = forwarder
            }
        } else {
            state.withLock { $0.subscriptions.removeValue(forKey: reference)?.cancel() }
            do { try await peripheral.setNotifyValue(false, for: characteristic) } catch { throw BLEParams.rpc(error) }
        }
        try await saveSubscriptions(of: central)
        return ["notifying": .bool(enable)]
    }

    /// Publishes the values of `reference` as `value` events until cancelled.
    func forward(_ central: CentralManager, _ reference: CharacteristicReference) -> Task<Void, Never> {
        let bus = self.bus
        let id = reference.peripheral.uuidString
        let uuid = reference.characteristic.uuidString
        let values = central.notifications(for: reference)
        return Task {
            for await value in values {
                bus.publish(.value) {
                    ["id": .string(id), "characteristic": .string(uuid), "value": .string(BLEParams.hex(value))]
                }
            }
        }
    }

    /// Ends the control scan run by `task` and says why (`stopped`, `replaced`, `duration`).
    private func scanEnded(_ task: Task<Void, Never>, reason: String) {
        task.cancel()
        bus.publish(.state, ["agentState": "scan", "scanning": false, "reason": .string(reason)])
    }
}
