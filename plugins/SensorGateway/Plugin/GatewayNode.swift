import BLE
import JSON
import RoleKit

/// The gateway's actor: owns the engine, feeds it reports and time, hands
/// its updates to the sinks and answers the control methods.
actor GatewayNode {
    private var engine: GatewayEngine
    private let sinks: [any ReadingSink]
    private let origin = ContinuousClock.now
    let clock: GatewayClock
    /// How the scan runs now, and why (`gateway.stats` `scan`).
    private var scan = ScanStatus(mode: "starting", reason: "no scan yet")

    init(engine: GatewayEngine, sinks: [any ReadingSink], unixNow: Int64) {
        self.engine = engine
        self.sinks = sinks
        clock = GatewayClock(unixOrigin: unixNow)
    }

    /// Time since the node started: the engine's clock.
    private var now: Duration { ContinuousClock.now - origin }

    /// A discovery from the scan (standing for `discovery.reportCount` reports when the central merged a
    /// device's reports while the gateway was busy); ignored when its address does not parse.
    func observe(_ discovery: Discovery) {
        guard let address = DeviceAddress(discovery.address) else { return }
        let report = GatewayReport(
            address: address, rssi: discovery.rssi, advertisement: discovery.advertisement,
            reportCount: discovery.reportCount)
        if let update = engine.ingest(report, at: now) { publish(update) }
        departed(engine.takeDepartures())
    }

    /// Runs expiry and the rate limits; returns how long until the next deadline.
    func tick() -> Duration? {
        let now = self.now
        for update in engine.tick(at: now) { publish(update) }
        departed(engine.takeDepartures())
        return engine.nextDeadline.map { $0 - now }
    }

    /// The gateway stops: every device it holds is gone as far as the sinks know.
    func departAll() {
        departed(engine.table.entries.map(\.address))
    }

    private func publish(_ update: ReadingUpdate) {
        for sink in sinks { sink.publish(update, clock: clock) }
    }

    private func departed(_ addresses: [DeviceAddress]) {
        for address in addresses {
            for sink in sinks { sink.departed(address) }
        }
    }

    func devices(_ query: DevicesQuery) -> JSON {
        GatewayJSON.devices(engine.table.entries, query, clock: clock)
    }

    func device(_ query: DeviceQuery) throws(PluginMethodError) -> JSON {
        guard let entry = engine.table.entry(query.address) else { throw GatewayError.unknownDevice(query.address) }
        return GatewayJSON.device(entry, clock: clock)
    }

    func stats() -> JSON {
        GatewayJSON.stats(
            engine.stats, devices: engine.table.count, maxDevices: engine.config.maxDevices, bindKeys: engine.keyCount,
            scan: scan)
    }

    /// The scan's mode changed (`plan` is what the gateway asked for); returns the new status.
    func scanModeChanged(_ mode: ScanMode, plan: ScanPlan) -> ScanStatus {
        scan = ScanStatus(mode, plan: plan)
        return scan
    }
}
