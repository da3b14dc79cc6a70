import BLE
import BLETesting
import Glibc
import IO
import Synchronization
import Testing

/// Ending a scan (cancelling the task that iterates it) while discoveries
/// arrive. The soak found the agent deadlocked on a reload: the manager
/// delivered a discovery under its state lock, which needs the consumer
/// task's status lock, while cancelling that task held its status lock and
/// ran the stream's termination handler, which needs the state lock.
@Suite struct ScanCancellationTests {
    @Test func cancellingScansWhileDiscoveriesArriveNeverDeadlocks() async throws {
        let backend = FakeCentralBackend()
        let manager = CentralManager(backend: backend, options: .init(), clock: ManualClock())
        backend.send(.bluetoothdPresent(true))
        backend.sendSnapshot(FakeTree.snapshot())
        for await state in manager.stateUpdates() where state == .poweredOn { break }

        let stop = Atomic<Bool>(false)
        let rounds = Atomic<Int>(0)
        // The feeder and the canceller run on threads of their own: if they
        // deadlock with the manager, the pool keeps a thread for the deadline.
        startThread {
            var rssi: Int64 = -40
            while !stop.load(ordering: .relaxed) {
                backend.send(FakeTree.deviceChanged(["RSSI": .int(rssi)]))
                rssi = rssi == -40 ? -41 : -40
                sched_yield()
            }
        }
        let finished = await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
            let once = Mutex<CheckedContinuation<Bool, Never>?>(done)
            let finish: @Sendable (Bool) -> Void = { result in
                once.withLock { $0.take() }?.resume(returning: result)
            }
            startThread {
                for _ in 0..<2_000 {
                    guard let scan = try? manager.scanForPeripherals(options: ScanOptions(allowDuplicates: true)) else {
                        continue
                    }
                    let first = Atomic<Bool>(false)
                    let consumer = Task {
                        var discoveries = scan.makeAsyncIterator()
                        _ = await discoveries.next()
                        first.store(true, ordering: .releasing)
                        while await discoveries.next() != nil {}
                    }
                    while !first.load(ordering: .acquiring) && !stop.load(ordering: .relaxed) { sched_yield() }
                    consumer.cancel()
                    rounds.add(1, ordering: .relaxed)
                }
                finish(true)
            }
            startThread {
                // A deadlock stops the rounds; a busy machine only slows them (each round waits for the
                // consumer task to be scheduled on the cooperative pool, which other tests may keep busy).
                // So the watchdog fails the test when no round completed for 30 s in a row, not when the
                // whole run is slow.
                var seen = -1
                var stalled = 0
                while stalled < 30 && !stop.load(ordering: .relaxed) {
                    var second = timespec(tv_sec: 1, tv_nsec: 0)
                    var left = timespec()
                    while nanosleep(&second, &left) != 0 && errno == EINTR { second = left }
                    let now = rounds.load(ordering: .relaxed)
                    stalled = now == seen ? stalled + 1 : 0
                    seen = now
                }
                finish(false)
            }
        }
        stop.store(true, ordering: .relaxed)
        #expect(
            finished,
            "scan cancellation deadlocked with discovery delivery: no round ended for 30 s, after \(rounds.load(ordering: .relaxed)) rounds"
        )
        if finished { manager.stopScan() }
    }
}

/// Runs `body` on a new detached thread, apart from Swift's cooperative pool.
private func startThread(_ body: @escaping @Sendable () -> Void) {
    do { try IOThread.spawn(name: "scan-cancel", body) } catch { preconditionFailure("\(error)") }
}
