import BLE
import DBus
import Glibc
import Synchronization
import TestSupport
import Testing

/// bleprobe-central (its `--restore-probe` mode) as a real process with state
/// restoration, against blesim on a private bus.
final class ProbeProcess: Sendable {
    static let executable = BlesimProcess.repositoryRoot + "/.build/debug/bleprobe-central"
    let pid: pid_t
    private let output: Int32
    private let buffered = Mutex<[UInt8]>([])
    private let reaped = Mutex(false)

    init(_ arguments: [String]) throws {
        let fds = try spawnPipe()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var argv: [UnsafeMutablePointer<CChar>?] = ([Self.executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var attributes = SpawnAttributes()
        defer { attributes.destroy() }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, Self.executable, &actions, &attributes.value, &argv, environ)
        close(fds[1])
        guard status == 0 else {
            close(fds[0])
            throw FaultRig.Failure("cannot start \(Self.executable): \(status)")
        }
        self.pid = pid
        output = fds[0]
    }

    deinit {
        kill()
        close(output)
    }

    /// The next line starting with `prefix` (earlier lines are skipped) or
    /// reporting a failure, or nil if the output ends or 20 s pass. Blocks a thread off the pool.
    func line(startingWith prefix: String) async throws -> String? {
        try await offPool { [self] in
            let end = ContinuousClock.now.advanced(by: .seconds(20))
            while true {
                let next: String? = buffered.withLock { bytes in
                    guard let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
                    let text = String(decoding: bytes[..<newline], as: UTF8.self)
                    bytes.removeFirst(newline + 1)
                    return text
                }
                if let next {
                    if next.hasPrefix(prefix) || next.contains("FAIL") { return next }
                    continue
                }
                let left = ContinuousClock.now.duration(to: end)
                guard left > .zero else { return nil }
                var poller = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
                let ready = poll(&poller, 1, Int32(left.components.seconds * 1000 + 1))
                if ready < 0 && errno == EINTR { continue }
                guard ready > 0 else { return nil }
                var chunk = [UInt8](repeating: 0, count: 4096)
                let count = read(output, &chunk, chunk.count)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return nil }
                buffered.withLock { $0 += chunk[..<count] }
            }
        }
    }

    /// The counters of the next `n` VALUE lines.
    func values(_ n: Int) async throws -> [Int] {
        var values: [Int] = []
        while values.count < n, let line = try await line(startingWith: "VALUE ") {
            values.append(Int(line.dropFirst("VALUE ".count)) ?? -1)
        }
        return values
    }

    /// SIGKILL and reap (idempotent).
    func kill() {
        reaped.withLock { done in
            guard !done else { return }
            Glibc.kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            done = true
        }
    }
}

@Suite("state restoration across a real SIGKILL", .serialized, .timeLimit(.minutes(2)))
struct RestorationProcessTests {
    @Test(
        "a central process subscribed with a restore identifier is SIGKILLed; started again on the same state directory it reports will-restore-state with its peripheral and subscription, reconnects and resubscribes once, and the notifications go on with no repeat"
    )
    func sigkillThenRestore() async throws {
        try await FaultRig.with { rig in
            let sim = try await rig.startSim()
            defer { sim.kill() }
            let state = rig.bus.directory + "/state"
            try #require(mkdir(state, 0o700) == 0)
            let arguments = ["--restore-probe", state, "--bus", rig.bus.address, "--timeout", "100"]
            let first = try ProbeProcess(arguments)
            defer { first.kill() }
            let subscribed = try #require(try await first.line(startingWith: "SUBSCRIBED "))
            try #require(subscribed.hasPrefix("SUBSCRIBED "), "\(subscribed)")
            let id = String(subscribed.dropFirst("SUBSCRIBED ".count))
            let before = try await first.values(10)
            #expect(before.count == 10 && isGapless(before), "\(before)")
            // Confirmed: connect and setNotifyValue returned. Now the process dies without a word.
            first.kill()
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

            let second = try ProbeProcess(arguments)
            defer { second.kill() }
            let restored = try #require(try await second.line(startingWith: "WILL-RESTORE "))
            try #require(restored.hasPrefix("WILL-RESTORE "), "\(restored)")
            #expect(restored == "WILL-RESTORE desired=\(id) subscriptions=1")
            let resubscribed = try #require(try await second.line(startingWith: "RESUBSCRIBED "))
            #expect(resubscribed == "RESUBSCRIBED \(id) notifying=true")
            let after = try await second.values(50)
            #expect(after.count == 50)
            #expect(isGapless(after), "no notification lost or doubled after the restore: \(after)")
            #expect(after.first.map { $0 > before.last ?? 0 } == true, "the counter went on: \(before) then \(after)")
            #expect(subscribes.value == 1, "BlueZ saw exactly one new subscription")
        }
    }
}
