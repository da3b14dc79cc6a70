import BLE
import JSON
import PaymentTerminalProfile
import RoleKit
import Synchronization

/// The point-of-sale lane (central role): scans for payment terminals,
/// chooses the nearest, connects to it and serves pos.* (docs/profiles/payment-terminal.md).
final class PaymentTerminalScannerPlugin: RolePlugin {
    private let context: RoleContext
    private let central: CentralManager
    private let config: ScannerConfig
    private let running = Mutex<(engine: ScannerEngine?, tasks: [Task<Void, Never>])>((nil, []))

    init(context: RoleContext) throws {
        self.context = context
        self.central = try context.central()
        self.config = try ScannerConfig(json: context.config)
    }

    func start() async throws {
        let engine = try await ScannerEngine(central: central, config: config, context: context)
        await engine.offerUnsettled()
        try register(engine)
        let central = self.central
        let logger = context.logger
        let scanning = Task {
            await central.scanWhilePoweredOn(
                withServices: [PaymentTerminalProfile.serviceUUID], options: ScanOptions(allowDuplicates: true),
                onChange: { event in
                    switch event {
                    case .scanning: logger.info("scanning for payment terminals")
                    case .refused(let error): logger.warning("cannot scan: \(error)")
                    case .ended(let end): logger.info("scan ended: \(end)")
                    }
                }
            ) { found in await engine.observe(found) }
        }
        let ticking = Task {
            while (try? await Task.sleep(for: .milliseconds(500))) != nil { await engine.tick() }
        }
        running.withLock { $0 = (engine, [scanning, ticking]) }
        context.logger.info(
            "started: threshold \(config.rssiThreshold) dBm, margin \(config.margin) dB, dwell \(config.dwellSeconds) s"
        )
    }

    func stop() async {
        let (engine, tasks) = running.withLock { running in
            defer { running = (nil, []) }
            return running
        }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        await engine?.shutdown()
        context.logger.info("stopped")
    }

    private func register(_ engine: ScannerEngine) throws {
        let methods = context.methods
        try methods.register(PosMethod.terminals.rawValue, params: PosMethod.terminals.params) { _ in
            await engine.terminalsJSON()
        }
        try methods.register(PosMethod.select.rawValue, params: PosMethod.select.params) { call in
            try await engine.select(try PosSelectParams(params: call.params))
        }
        try methods.register(PosMethod.release.rawValue, params: PosMethod.release.params) { _ in
            await engine.release()
        }
        try methods.register(PosMethod.transactions.rawValue, params: PosMethod.transactions.params) { call in
            await engine.transactionsJSON(try PosTransactionsParams(params: call.params))
        }
        try methods.register(PosMethod.pay.rawValue, params: PosMethod.pay.params) { call in
            try await engine.pay(try PosPayParams(params: call.params))
        }
    }
}
