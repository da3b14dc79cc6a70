import BLE
import JSON
import RoleKit
import Synchronization

/// blebench's plugin (docs/benchmarks.md): the load an application plugin
/// puts on the agent, driven through `bench.*` control methods. In the
/// central role it counts scan discoveries, connects to the bench peripheral,
/// receives its notifications and writes to it without response; in the
/// peripheral role it publishes the bench service, notifies at a given rate
/// and receives the writes. Every value carries its send time, so the
/// receiving side reports latencies. The plugin takes no config.
final class BenchPlugin: RolePlugin {
    private let context: RoleContext
    private let tasks = Mutex<[Task<Void, Never>]>([])

    init(context: RoleContext) {
        self.context = context
    }

    func start() async throws {
        switch context.role {
        case .central:
            let central = BenchCentral(central: try context.central())
            try central.register(context.methods)
        case .peripheral:
            let peripheral = BenchPeripheral(manager: try context.peripheral(), logger: context.logger)
            tasks.withLock { $0 = peripheral.start() }
            try peripheral.register(context.methods)
        }
        context.logger.info("started in the \(context.role) role")
    }

    func stop() async {
        let running = tasks.withLock { tasks in
            defer { tasks = [] }
            return tasks
        }
        for task in running { task.cancel() }
        for task in running { await task.value }
    }
}

/// The error of a bench method that failed (code 1) or ran out of time (code 2).
struct BenchError: Error {
    let error: PluginMethodError

    static func failed(_ message: String) -> BenchError { BenchError(error: PluginMethodError(code: 1, message)) }
}

/// Runs `body`, cancelling it after `seconds`; throws a timeout then.
func withDeadline<T: Sendable>(
    seconds: Double, _ what: String, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            throw PluginMethodError(code: 2, "\(what): no outcome within \(seconds) s")
        }
        return value
    }
}

/// The figures of a ``LatencyWindow`` as a method result.
func windowJSON(_ window: inout LatencyWindow) -> JSON {
    let figures = window.take()
    return [
        "count": .int(Int64(figures.count)), "p50Us": figures.p50.map(JSON.double) ?? .null,
        "p99Us": figures.p99.map(JSON.double) ?? .null, "maxUs": figures.max.map(JSON.double) ?? .null,
        "unsampled": .int(Int64(figures.unsampled)),
    ]
}

/// Calls `send` with sequence numbers up to `count` times within `seconds`, `rate` a second (0: as fast as it
/// goes). `send` returns false when the sender's queue is full; `wait` then waits for room before the next try.
/// The result: `sent`, `seconds`, and `waits` (how often the queue was full).
func pacedRun(
    count: Int, rate: Int, seconds: Double, send: (UInt64) async throws -> Bool, wait: () async -> Void
) async throws -> JSON {
    let clock = ContinuousClock()
    let start = clock.now
    let end = start + .milliseconds(Int(seconds * 1000))
    var sent = 0
    var waits = 0
    while sent < count, clock.now < end, !Task.isCancelled {
        if rate > 0 {
            let due = start + .microseconds(Int64(sent) * 1_000_000 / Int64(rate))
            if due > clock.now { try await Task.sleep(until: due, clock: clock) }
        }
        if try await send(UInt64(sent)) {
            sent += 1
        } else {
            waits += 1
            await wait()
        }
    }
    let (whole, fraction) = (clock.now - start).components
    return [
        "sent": .int(Int64(sent)), "seconds": .double(Double(whole) + Double(fraction) / 1e18),
        "waits": .int(Int64(waits)),
    ]
}

/// Registers `method`, a run taking `count` (default a million), `rate` a second (0, the default: as fast as
/// flow control allows) and `seconds` (default 5), cancelled 10 s after `seconds`.
func registerRun(
    _ method: String, on methods: any PluginMethodRegistrar,
    _ run: @escaping @Sendable (_ count: Int, _ rate: Int, _ seconds: Double) async throws -> JSON
) throws {
    let params = ParamSchema.object(
        .optional("count", .integer(1...100_000_000)), .optional("rate", .integer(0...1_000_000)),
        .optional("seconds", .integer(1...3600)))
    try methods.register(method, params: params) { call in
        let count = call.arguments.int("count") ?? 1_000_000
        let rate = call.arguments.int("rate") ?? 0
        let seconds = call.arguments.int("seconds") ?? 5
        return try await withDeadline(seconds: Double(seconds) + 10, method) {
            try await run(Int(count), Int(rate), Double(seconds))
        }
    }
}
