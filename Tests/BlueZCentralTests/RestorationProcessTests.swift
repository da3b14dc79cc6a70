import BLE
import BLETesting
import DBus
import Glibc
import Testing

/// bleprobe-central (its `--restore-probe` mode) as a real process with state
/// restoration, against blesim on a private bus.
final class ProbeProcess: Sendable {
    static let executable = BlesimProcess.repositoryRoot + "/.build/debug/bleprobe-central"
    private let process: TestProcess

    init(_ arguments: [String]) async throws {
        process = try await TestProcess(Self.executable, arguments)
    }

    /// The next line starting with `prefix` (earlier lines are skipped) or
    /// reporting a failure, or nil if the output ends or 20 s pass.
    func line(startingWith prefix: String) async throws -> String? {
        await process.waitForLine { $0.hasPrefix(prefix) || $0.contains("FAIL") }
    }

    /// The counters of the next `n` VALUE lines.
    func values(_ n: Int) async throws -> [Int] {
        var values: [Int] = []
        while values.count < n, let line = try await line(startingWith: "VALUE ") {
            values.append(Int(line.dropFirst("VALUE ".count)) ?? -1)
        }
        return values
    }

    /// SIGKILL, and the exit awaited.
    func kill() async {
        process.signal(SIGKILL)
        _ = await process.process.wait()
    }

    /// SIGKILL without waiting (the shared loop reaps it), for clean-up in `defer`.
    func stop() { process.signal(SIGKILL) }
}

@Suite("state restoration across a real SIGKILL", .serialized, .timeLimit(.minutes(2)))
struct RestorationProcessTests {
    @Test(
        "a central process subscribed with a restore identifier is SIGKILLed; started again on the same state directory it reports will-restore-state with its peripheral and subscription, reconnects and resubscribes once, and the notifications go on with no repeat"
    )
    func sigkillThenRestore() async throws {
        try await FaultRig.with { rig in
            let sim = try await rig.startSim()
            defer { sim.stop() }
            let state = rig.bus.directory + "/state"
            try #require(mkdir(state, 0o700) == 0)
            let arguments = ["--restore-probe", state, "--bus", rig.bus.address, "--timeout", "100"]
            let first = try await ProbeProcess(arguments)
            defer { first.stop() }
            let subscribed = try #require(try await first.line(startingWith: "SUBSCRIBED "))
            try #require(subscribed.hasPrefix("SUBSCRIBED "), "\(subscribed)")
            let id = String(subscribed.dropFirst("SUBSCRIBED ".count))
            let before = try await first.values(10)
            #expect(before.count == 10 && isGapless(before), "\(before)")
            // Confirmed: connect and setNotifyValue returned. Now the process dies without a word.
            await first.kill()
            // The link drops while it is dead, so the restored process must reconnect.
            try await rig.control("DropLink", [.string(FaultRig.hrmAddress)])
            // 2A37 is the scenario's only notifying characteristic: count every confirmation under the device.
            let changes = try await rig.deviceChanges()
            let subscribes = Counter()
            let watcher = Task {
                for await (_, changed) in changes
                where changed["NotifyAcquired"]?.boolValue == true || changed["Notifying"]?.boolValue == true {
                    subscribes.increment()
                }
            }
            defer { watcher.cancel() }

            let second = try await ProbeProcess(arguments)
            defer { second.stop() }
            let restored = try #require(try await second.line(startingWith: "WILL-RESTORE "))
            try #require(restored.hasPrefix("WILL-RESTORE "), "\(restored)")
            #expect(restored == "WILL-RESTORE desired=\(id) subscriptions=1")
            let resubscribed = try #require(try await second.line(startingWith: "RESUBSCRIBED "))
            #expect(resubscribed == "RESUBSCRIBED \(id) notifying=true")
            let after = try await second.values(50)
            #expect(after.count == 50)
            #expect(isGapless(after), "no notification lost or doubled after the restore: \(after)")
            #expect(after.first.map { $0 > before.last ?? 0 } == true, "the counter went on: \(before) then \(after)")
            #expect(await subscribes.value(reaching: 1) == 1, "BlueZ saw exactly one new subscription")
        }
    }
}
