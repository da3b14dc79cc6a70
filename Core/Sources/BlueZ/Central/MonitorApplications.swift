import BLE
import DBus
import Synchronization

/// The advertisement monitor applications of one ``BlueZCentralBackend``: per adapter, an
/// ObjectManager root registered with AdvertisementMonitorManager1.RegisterMonitor, and below it
/// one `org.bluez.AdvertisementMonitor1` object per passive scan. The objects are exported on the
/// backend's connection through its ``ObjectServer`` (the machinery the peripheral backend uses for
/// GATT applications and advertisements), callable by bluetoothd only.
final class MonitorApplications: Sendable {
    struct Root: Sendable {
        let path: ObjectPath
        var registered = false
        var scans: Set<UInt64> = []
    }

    struct State: Sendable {
        var roots: [String: Root] = [:]
        var scans: [UInt64: (adapter: String, path: ObjectPath)] = [:]
    }

    let state = Mutex(State())
    /// Registrations and withdrawals, one at a time (export, register, unregister, unexport).
    let lock = AsyncLock()
    /// This backend's part of the object tree: `/org/bleagent/central<N>`.
    let base: String

    private static let instances = Atomic<Int>(0)

    init() {
        let number = Self.instances.wrappingAdd(1, ordering: .relaxed).oldValue
        base = "/org/bleagent/central\(number)"
    }

    /// The application root for `adapter` (`/org/bluez/hci0` → `<base>/hci0`).
    func rootPath(adapter: String) throws(DBusMarshalError) -> ObjectPath {
        let name = adapter.split(separator: "/").last.map(String.init) ?? "adapter"
        return try ObjectPath(base + "/" + name.filter { $0.isLetter || $0.isNumber || $0 == "_" })
    }

    /// bluetoothd left or changed: it forgot every registration (objects stay exported until
    /// their scans end).
    func bluetoothdChanged() {
        state.withLock { state in
            for adapter in state.roots.keys { state.roots[adapter]?.registered = false }
        }
    }
}

extension BlueZCentralBackend {
    /// Registers the monitor of `scan` (see ``CentralBackend/registerMonitor(adapter:scan:_:)``):
    /// checks SupportedMonitorTypes, exports the monitor object, and registers the adapter's
    /// application root when it is not registered yet.
    public func registerMonitor(adapter: String, scan: UInt64, _ monitor: AdvertisementMonitor) async throws(BLEError) {
        try await monitors.lock.run { () throws(BLEError) in
            try await checkMonitorSupport(adapter: adapter)
            let objects = connection.objects
            let root: ObjectPath
            let path: ObjectPath
            do {
                root = try monitors.rootPath(adapter: adapter)
                path = try ObjectPath(root.rawValue + "/scan\(scan)")
                let registered = monitors.state.withLock { state in
                    state.roots[adapter, default: MonitorApplications.Root(path: root)].scans.insert(scan)
                    state.scans[scan] = (adapter, path)
                    return state.roots[adapter]?.registered ?? false
                }
                if !registered { objects.addObjectManager(at: root, authorize: monitorAuthorizer) }
                try objects.export(
                    path, interfaces: [monitorInterface(monitor, scan: scan)], authorize: monitorAuthorizer)
                if registered { return }
            } catch {
                await withdraw(scan)
                throw BLEError(.failed, message: "cannot export the advertisement monitor: \(error)")
            }
            do throws(BLEError) {
                _ = try await call(
                    adapter, BlueZInterface.advertisementMonitorManager, "RegisterMonitor", [.objectPath(root)])
                monitors.state.withLock { $0.roots[adapter]?.registered = true }
            } catch {
                await withdraw(scan)
                throw BLEError(
                    error.code, bluezError: error.bluezError,
                    message: "RegisterMonitor failed: \(error.bluezError?.name.rawValue ?? "") \(error.message ?? "")")
            }
        }
    }

    /// Withdraws the monitor of `scan`; the adapter's last one also unregisters its root.
    public func unregisterMonitor(scan: UInt64) async {
        _ = try? await monitors.lock.run { () throws(BLEError) in await withdraw(scan) }
    }

    /// Unexports the monitor of `scan` and, when its root holds no other, unregisters and removes the root.
    private func withdraw(_ scan: UInt64) async {
        let (path, emptied) = monitors.state.withLock {
            state -> (ObjectPath?, (adapter: String, root: MonitorApplications.Root)?) in
            guard let (adapter, path) = state.scans.removeValue(forKey: scan) else { return (nil, nil) }
            state.roots[adapter]?.scans.remove(scan)
            guard let root = state.roots[adapter], root.scans.isEmpty else { return (path, nil) }
            state.roots[adapter] = nil
            return (path, (adapter, root))
        }
        if let path { try? connection.objects.unexport(path) }
        guard let emptied else { return }
        if emptied.root.registered {
            _ = try? await call(
                emptied.adapter, BlueZInterface.advertisementMonitorManager, "UnregisterMonitor",
                [.objectPath(emptied.root.path)])
        }
        try? connection.objects.unexport(emptied.root.path)
    }

    /// Throws the reason `adapter` cannot serve an `or_patterns` monitor: no
    /// AdvertisementMonitorManager1 (bluetoothd 5.66 serves it only with `-E`) or no `or_patterns`.
    private func checkMonitorSupport(adapter: String) async throws(BLEError) {
        let reply: DBusMessage
        do {
            reply = try await call(
                adapter, BlueZNames.properties, "Get",
                [.string(BlueZInterface.advertisementMonitorManager), .string("SupportedMonitorTypes")])
        } catch {
            if error.code == .unauthorized { throw error }
            throw BLEError(
                .operationNotSupported, bluezError: error.bluezError,
                message: "\(adapter) has no AdvertisementMonitorManager1 (bluetoothd without experimental features?)")
        }
        let types = (try? reply.arguments())?.first?.arrayValue?.compactMap(\.stringValue) ?? []
        guard types.contains("or_patterns") else {
            throw BLEError(
                .operationNotSupported,
                message:
                    "\(adapter) monitors \(types.isEmpty ? "no type" : types.joined(separator: ", ")), not or_patterns")
        }
    }

    private var monitorAuthorizer: ObjectServer.Authorizer {
        { [gate] sender in gate.owner == sender }
    }

    /// `org.bluez.AdvertisementMonitor1` of `scan`: Type `or_patterns`, its Patterns and RSSI
    /// thresholds as constants; Activate, Release, DeviceFound and DeviceLost become
    /// ``CentralBackendEvent/monitor(scan:_:)``.
    private func monitorInterface(_ monitor: AdvertisementMonitor, scan: UInt64) throws -> ExportedInterface {
        let gate = self.gate
        let report: @Sendable (MonitorEvent) -> Void = { gate.yield(.monitor(scan: scan, $0)) }
        func deviceMethod(
            _ name: String, _ event: @escaping @Sendable (String) -> MonitorEvent
        ) throws -> ExportedMethod {
            try ExportedMethod(name, in: "o", out: "") { call in
                if let device = try call.arguments().first?.stringValue { report(event(device)) }
                return []
            }
        }
        let methods = [
            try ExportedMethod("Activate", in: "", out: "") { _ in
                report(.activated)
                return []
            },
            try ExportedMethod("Release", in: "", out: "") { _ in
                report(.released)
                return []
            },
            try deviceMethod("DeviceFound") { .deviceFound($0) },
            try deviceMethod("DeviceLost") { .deviceLost($0) },
        ]
        var properties: [(String, DBusValue)] = [
            ("Type", .string("or_patterns")),
            (
                "Patterns",
                .array(
                    .structure([.byte, .byte, .array(.byte)]),
                    monitor.patterns.map { .structure([.byte($0.start), .byte($0.adType), .bytes($0.content)]) })
            ),
        ]
        if let rssi = monitor.rssiThresholds {
            properties += [
                ("RSSIHighThreshold", .int16(Int16(clamping: rssi.high))),
                ("RSSIHighTimeout", .uint16(UInt16(clamping: rssi.highTimeout))),
                ("RSSILowThreshold", .int16(Int16(clamping: rssi.low))),
                ("RSSILowTimeout", .uint16(UInt16(clamping: rssi.lowTimeout))),
                ("RSSISamplingPeriod", .uint16(UInt16(clamping: rssi.samplingPeriod))),
            ]
        }
        return try ExportedInterface(
            BlueZInterface.advertisementMonitor, methods: methods,
            properties: properties.map {
                try ExportedProperty($0.0, type: $0.1.type, value: $0.1, changeSignal: .constant)
            })
    }
}
