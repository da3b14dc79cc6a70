import BLE
import IO
import JSON
import RoleKit
import Synchronization

/// The sensor aggregator role plugin (peripheral): reads the config, runs a
/// ``SensorAggregatorNode`` and feeds it from the ingest socket and the
/// peripheral manager's streams; `sensors.*` control methods.
final class SensorAggregatorPlugin: RolePlugin {
    private let context: RoleContext
    private let config: SensorAggregatorConfig
    private let running = Mutex<(node: SensorAggregatorNode?, socket: IngestSocket?, tasks: [Task<Void, Never>])>(
        (nil, nil, []))

    init(context: RoleContext) throws(JSONFieldErrors) {
        self.context = context
        config = try SensorAggregatorConfig(json: context.config)
    }

    func start() async throws {
        let manager = try? context.peripheral()
        if manager == nil { context.logger.warning("no peripheral manager: serving the control API only") }
        let node = SensorAggregatorNode(
            config: config, manager: manager, state: context.state, logger: context.logger, events: context.events,
            fleet: context.fleet, now: unixNow())
        await node.restore(now: unixNow())
        context.fleet.declareSensors(config.sensors.map(\.fleetSensor))
        var socket: IngestSocket?
        if let ingest = config.ingest {
            do throws(SystemError) {
                socket = try IngestSocket(path: ingest.socketPath, maxLineBytes: ingest.maxLineBytes)
            } catch {
                throw PluginConfigError(path: "ingest.socketPath", error.description)
            }
        }
        var tasks: [Task<Void, Never>] = []
        if let socket {
            let logger = context.logger
            tasks.append(
                Task {
                    var overflowed = 0
                    for await datagram in socket.datagrams {
                        // A flood overflowed the waiting datagrams: logged at the 1st, 2nd, 4th, 8th... drop.
                        let now = socket.overflowed
                        if now > overflowed, (overflowed + 1...now).contains(where: { $0 & ($0 - 1) == 0 }) {
                            logger.warning("ingest: \(now) datagrams dropped unparsed so far (more than 256 waiting)")
                        }
                        overflowed = now
                        await node.ingest(datagram)
                    }
                })
        }
        if let manager {
            let requests = manager.requests()
            let subscriptions = manager.subscriptionEvents()
            let ready = manager.readyToUpdate()
            let states = manager.stateUpdates()
            tasks.append(Task { for await request in requests { await node.handle(request) } })
            tasks.append(Task { for await event in subscriptions { await node.handle(event) } })
            tasks.append(Task { for await _ in ready { await node.transmitReady() } })
            tasks.append(Task { for await state in states where state == .poweredOn { await node.publish() } })
        }
        running.withLock { $0 = (node, socket, tasks) }
        try context.methods.register("sensors.readings", params: .none) { _ in await node.readings() }
        try context.methods.register("sensors.subscriptions", params: .none) { _ in await node.subscriptions() }
        try context.methods.register("sensors.ingest-stats", params: .none) { [socket] _ in
            await node.ingestStats(overflowed: socket?.overflowed ?? 0)
        }
        await node.begin()
        context.logger.info(
            "started: \(config.sensors.count) sensors"
                + (config.ingest.map { ", ingest socket \($0.socketPath)" } ?? ""))
    }

    func stop() async {
        let (node, socket, tasks) = running.withLock { state in
            defer { state = (nil, nil, []) }
            return state
        }
        socket?.close()
        for task in tasks { task.cancel() }
        await node?.shutdown()
        context.logger.info("stopped")
    }
}
