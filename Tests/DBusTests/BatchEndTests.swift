import BLETesting
import DBus
import Synchronization
import Testing

/// A signal handler hears the end of each run of signals it got, so that it wakes its consumers; under a flood the
/// connection spaces the ends out, and the run that ends a flood must still end.
@Suite("Signal handlers hear the end of every run")
struct BatchEndTests {
    @Test(
        "after a flood of signals in runs closer together than the batch-end interval, the last signal is followed by a batch end"
    )
    func lastRunEnds() async throws {
        try await PrivateBus.with { bus in
            let emitter = try await bus.connect()
            let receiver = try await bus.connect()
            let handled = Atomic<Int>(0)
            let (ends, endsContinuation) = AsyncStream.makeStream(of: Int.self)
            let subscription = try await receiver.handleSignals(
                MatchRule(interface: SignalTests.interface, member: "Tick"),
                batchEnded: { endsContinuation.yield(handled.load(ordering: .relaxed)) },
                handler: { _ in handled.add(1, ordering: .relaxed) })
            let total = 2_000
            for value in 0..<total {
                try SignalTests.emit(emitter, "Tick", Int32(value))
                if value % 10 == 9 { await emitter.flush() }
            }
            let deadline = Task {
                try? await Task.sleep(for: .seconds(30))
                endsContinuation.finish()
            }
            var endsHeard = 0
            var lastEnd = 0
            for await count in ends {
                endsHeard += 1
                lastEnd = count
                if count == total { break }
            }
            deadline.cancel()
            #expect(lastEnd == total, "\(endsHeard) batch ends, the last after \(lastEnd) of \(total) signals")
            subscription.cancel()
            await emitter.close()
            await receiver.close()
        }
    }
}
