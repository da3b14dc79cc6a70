import BLE
import JSON
import RoleKit
import Synchronization
import VirtualPaymentTerminal

/// A virtual payment terminal in the peripheral role: the Payment Terminal
/// Service (docs/profiles/payment-terminal.md) from `roles.peripheral.config`
/// (`name`, `terminalId`, `vendor`, `model`, `firmware`, `capabilities`,
/// `batteryLevel`, `latencyMs`, `rules`), and `terminal.status`.
final class VirtualTerminalPlugin: RolePlugin {
    private let context: RoleContext
    private let config: VirtualTerminalConfig
    private let running = Mutex<(node: VirtualTerminalNode?, tasks: [Task<Void, Never>])>((nil, []))

    init(context: RoleContext) throws(JSONFieldErrors) {
        self.context = context
        config = try VirtualTerminalConfig(json: context.config)
    }

    func start() async throws {
        let manager = try? context.peripheral()
        let node = VirtualTerminalNode(
            config: config, manager: manager, state: context.state, logger: context.logger, events: context.events)
        await node.restore()
        var tasks: [Task<Void, Never>] = []
        if let manager {
            let requests = manager.requests()
            let ready = manager.readyToUpdate()
            let states = manager.stateUpdates()
            tasks.append(Task { for await request in requests { await node.handle(request) } })
            tasks.append(Task { for await _ in ready { await node.transmitReady() } })
            tasks.append(Task { for await state in states where state == .poweredOn { await node.publish() } })
        }
        running.withLock { $0 = (node, tasks) }
        try context.methods.register("terminal.status", params: .none) { _ in await node.report() }
        context.logger.info("started as \"\(config.name)\"")
    }

    func stop() async {
        let (node, tasks) = running.withLock { state in
            defer { state = (nil, []) }
            return state
        }
        for task in tasks { task.cancel() }
        await node?.shutdown()
        context.logger.info("stopped")
    }
}
