import DBus
import GATT
import SimCore

/// Runs the scenario's virtual centrals (`centrals`, docs/blesim.md): each step at its time
/// after the trigger, through the operations Control1's Central methods use. Each step's
/// outcome is logged on standard error (`blesim: central hciN: ...`).
enum ScenarioCentralRunner {
    /// One task per central; cancelled with the server.
    static func start(
        _ centrals: [ScenarioCentral], central: VirtualCentralMethods, host: SimHost
    ) -> [Task<
        Void, Never
    >] {
        centrals.map { declared in Task { await run(declared, central: central, host: host) } }
    }

    private static func run(_ declared: ScenarioCentral, central: VirtualCentralMethods, host: SimHost) async {
        let index = declared.adapter
        let name = "central hci\(index)"
        guard host.read({ $0.adapters.indices.contains(index) }) else {
            Log.error("\(name): no adapter hci\(index); its steps are skipped")
            return
        }
        let clock = ContinuousClock()
        if declared.trigger == .application {
            // The shell has no event for a registration; the world is looked at every 20 ms.
            while !host.read({ $0.localPeripherals[index]?.applications.isEmpty == false }) {
                guard (try? await clock.sleep(for: .milliseconds(20))) != nil else { return }
            }
        }
        let origin = clock.now
        for step in declared.steps {
            guard (try? await clock.sleep(until: origin + .milliseconds(Int64(step.at * 1000)))) != nil else {
                return
            }
            do {
                Log.info("\(name): " + (try await perform(step.action, on: index, central: central)))
            } catch let error as DBusError {
                Log.info("\(name): \(describe(step.action)) failed: \(error.name.rawValue) \(error.message)")
            } catch {
                Log.info("\(name): \(describe(step.action)) failed: \(error)")
            }
        }
    }

    private static func perform(
        _ action: ScenarioCentral.Action, on index: Int, central: VirtualCentralMethods
    ) async throws -> String {
        switch action {
        case .connect: try central.connect(index)
        case .disconnect: central.disconnect(index)
        case .read(let uuid):
            let value = try await central.read(index, uuid)
            return "\(describe(action)) = " + value.map { hex($0) }.joined()
        case .write(let uuid, let value, let withResponse):
            try await central.write(index, uuid, value, withResponse: withResponse)
        case .subscribe(let uuid, let on): try central.subscribe(index, uuid, on)
        }
        return describe(action)
    }

    private static func describe(_ action: ScenarioCentral.Action) -> String {
        switch action {
        case .connect: "connect"
        case .disconnect: "disconnect"
        case .read(let uuid): "read \(uuid)"
        case .write(let uuid, let value, let withResponse):
            "write \(uuid) \(value.map { hex($0) }.joined())\(withResponse ? "" : " without response")"
        case .subscribe(let uuid, let on): (on ? "subscribe " : "unsubscribe ") + "\(uuid)"
        }
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }
}
