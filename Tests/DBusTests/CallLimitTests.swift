import BLETesting
import DBus
import Synchronization
import Testing

@Suite("an object server bounds the calls it serves", .timeLimit(.minutes(2)))
struct CallLimitTests {
    @Test(
        "at most maxCallsInFlight handlers run at once; further calls wait, at most maxQueuedCalls; past that a call is refused at once with LimitsExceeded and counted; the waiting calls are served once slots free"
    )
    func callsPastTheBoundsAreRefused() async throws {
        try await PrivateBus.with { bus in
            let server = try await bus.connect()
            let client = try await bus.connect()
            server.objects.limits = ObjectServer.Limits(maxCallsInFlight: 4, maxQueuedCalls: 8)
            let gate = Gate()
            let handlers = Concurrency()
            let outcomes = Recorder<String>()
            try server.objects.export(
                Fixture.path,
                interfaces: [
                    try ExportedInterface(
                        Fixture.interface,
                        methods: [
                            ExportedMethod("Hold", in: "", out: "") { _ in
                                handlers.enter()
                                await gate.wait()
                                handlers.leave()
                                return []
                            }
                        ])
                ])
            let destination = server.uniqueName
            let call: @Sendable () async -> Void = {
                do {
                    _ = try await client.call(
                        destination: destination, path: Fixture.path, interface: Fixture.interface, member: "Hold")
                    outcomes.append("served")
                } catch let error as DBusError {
                    outcomes.append(error.name.rawValue)
                } catch {
                    outcomes.append("\(error)")
                }
            }
            // Four calls take the four slots; only once their handlers run do the next sixteen arrive (however
            // slowly the serving task gets a thread): eight wait, eight are refused.
            var calls = (0..<4).map { _ in Task { await call() } }
            await handlers.entries.wait(for: 4)
            calls += (0..<16).map { _ in Task { await call() } }
            // Nothing is served while the gate is shut: the first outcomes are the refusals.
            await outcomes.wait(for: 8)
            #expect(outcomes.values == Array(repeating: DBusError.Name.limitsExceeded.rawValue, count: 8))
            let counters = server.objects.callCounters
            #expect(counters.inFlight == 4 && counters.queued == 8 && counters.refused == 8, "\(counters)")
            #expect(handlers.peak == 4)
            gate.open()
            for call in calls { await call.value }
            #expect(outcomes.values.filter { $0 == "served" }.count == 12)
            #expect(handlers.peak == 4, "never more than 4 handlers at once")
            #expect(server.objects.callCounters.inFlight == 0)
            await client.close()
            await server.close()
        }
    }
}
