import BLE
import BTHomeCrypto
import Glibc
import IO
import JSON
import RoleKit
import Synchronization

/// The sensor gateway (central role): scans unfiltered with duplicates,
/// decodes the sensors and beacons it knows, keeps each one's latest state
/// and hands readings on as `reading` events and, on a fleet broker, MQTT
/// messages with Home Assistant discovery; `gateway.*` control methods
/// (docs/profiles/sensor-gateway.md).
final class SensorGatewayPlugin: RolePlugin {
    private let context: RoleContext
    private let central: CentralManager
    private let config: GatewayConfig
    private let running = Mutex<(tasks: [Task<Void, Never>], node: GatewayNode?)>(([], nil))
    /// Follows the current scan's mode (replaced at each scan).
    private let modeWatch = Mutex<Task<Void, Never>?>(nil)

    init(context: RoleContext) throws {
        self.context = context
        self.config = try GatewayConfig(json: context.config)
        self.central = try context.central()
    }

    func start() async throws {
        let keys = try await loadKeys()
        let node = GatewayNode(
            engine: GatewayEngine(config: config, keys: keys),
            sinks: [EventReadingSink(events: context.events), FleetReadingSink(fleet: context.fleet)],
            unixNow: unixMilliseconds())
        try register(node)
        let central = self.central
        let logger = context.logger
        // Every device, every advertisement: no service filter, duplicates on; passive through an
        // advertisement monitor of the decoders' formats where the config and the adapter allow.
        let plan = ScanPlan(config: config)
        logger.info("scan plan: \(plan.monitor == nil ? "active" : "passive where offered") (\(plan.reason))")
        let scanning = Task {
            await central.scanWhilePoweredOn(
                withServices: nil, options: ScanOptions(allowDuplicates: true, monitor: plan.monitor),
                onChange: { event in
                    switch event {
                    case .scanning: logger.info("scanning: every advertisement, duplicates included")
                    case .refused(let error): logger.warning("cannot scan: \(error)")
                    case .ended(let end): logger.info("scan ended: \(end)")
                    }
                },
                onScan: { stream in
                    let watch = Task {
                        for await mode in stream.modeUpdates() {
                            let status = await node.scanModeChanged(mode, plan: plan)
                            logger.info("scan mode: \(status.mode) (\(status.reason))")
                        }
                    }
                    self.modeWatch.withLock { previous in
                        previous?.cancel()
                        previous = watch
                    }
                }
            ) { found in await node.observe(found) }
        }
        let ticking = Task {
            while !Task.isCancelled {
                let wait = await node.tick() ?? .seconds(1)
                let bounded = min(max(wait, .milliseconds(20)), .seconds(1))
                guard (try? await Task.sleep(for: bounded)) != nil else { return }
            }
        }
        running.withLock { $0 = ([scanning, ticking], node) }
        context.logger.info(
            "started: at most \(config.maxDevices) devices, expiry \(config.expirySeconds) s, "
                + "reading events every \(config.eventIntervalSeconds) s per device, \(keys.count) bind keys")
    }

    func stop() async {
        let (tasks, node) = running.withLock { running in
            defer { running = ([], nil) }
            return running
        }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        modeWatch.withLock { watch in
            watch?.cancel()
            watch = nil
        }
        // Its devices are no longer watched: on the fleet broker they go offline.
        await node?.departAll()
        context.logger.info("stopped")
    }

    /// The bind keys from the key file, read on the core's blocking pool (a
    /// blocking read of a configured path stays off Swift's cooperative
    /// pool). The keys themselves never reach the log.
    private func loadKeys() async throws -> [DeviceAddress: BTHomeBindKey] {
        guard let name = config.keyFile else { return [:] }
        let path = name.hasPrefix("/") ? name : "\(context.state.directory)/\(name)"
        do throws(BindKeyFileError) {
            let file = try await BindKeyFileReader.read(path, on: .shared)
            context.logger.info("\(file.keys.count) bind keys from \(path)")
            return file.keys
        } catch {
            throw PluginConfigError(path: "keyFile", "\(path) \(error.description)")
        }
    }

    private func register(_ node: GatewayNode) throws {
        let methods = context.methods
        try methods.register(GatewayMethod.devices.rawValue, params: GatewayMethod.devices.params) { call in
            await node.devices(DevicesQuery(arguments: call.arguments))
        }
        try methods.register(GatewayMethod.device.rawValue, params: GatewayMethod.device.params) { call in
            guard let query = DeviceQuery(arguments: call.arguments) else {
                throw PluginMethodError.invalidParams("address: expected a device address AA:BB:CC:DD:EE:FF")
            }
            return try await node.device(query)
        }
        try methods.register(GatewayMethod.stats.rawValue, params: GatewayMethod.stats.params) { _ in
            await node.stats()
        }
    }
}

/// The wall clock, Unix milliseconds.
func unixMilliseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}
