import IO

#if canImport(Glibc)
    import Glibc
#endif

/// Starting the simulator's children (the private dbus-daemon, blesim) and waiting for their ready lines: a
/// ``ChildProcess`` forked from the shared loop's thread with a parent-death signal (SIGTERM), its standard output
/// read on that loop, its standard error the agent's. Waiting is an event with a deadline, never a sleep.
enum SimChild {
    /// The most of a child's standard output kept (it is read to the end, so the child never blocks on the pipe).
    static let outputLimit = 64 << 10

    /// Starts `executable` with `arguments` in the agent's environment without `NOTIFY_SOCKET` (systemd hears the
    /// agent, not its children).
    static func start(
        _ executable: String, _ arguments: [String], name: String
    ) async throws(ProcessFailure)
        -> ChildProcess
    {
        let environment = ChildProcess.currentEnvironment().filter { !$0.hasPrefix("NOTIFY_SOCKET=") }
        do {
            return try await ChildProcess.spawn(
                executable, arguments, name: name, environment: environment, standardInput: .null,
                standardOutput: .collect(limit: outputLimit), standardError: .inherit, deathSignal: SIGTERM)
        } catch {
            throw ProcessFailure("cannot start \(name) (\(executable)): \(error.detail ?? error.errno.description)")
        }
    }

    /// The first line of `child`'s output that satisfies `accept`; fails when the child exits or closes its output
    /// first, or `deadline` passes.
    static func waitForLine(
        of child: ChildProcess, within deadline: Duration, _ accept: @escaping @Sendable (String) -> Bool
    ) async throws(ProcessFailure) -> String {
        guard let output = child.standardOutput else { throw ProcessFailure("\(child.name) has no output to read") }
        let found = await output.wait(timeout: deadline) { bytes in firstLine(in: bytes, accept) != nil }
        if found, let line = firstLine(in: output.bytes, accept) { return line }
        if output.isFinished {
            let status = await child.wait(timeout: .seconds(5))
            throw ProcessFailure("\(child.name) exited before it was ready\(status.map { " (\($0))" } ?? "")")
        }
        throw ProcessFailure("\(child.name) did not get ready within \(deadline.components.seconds) s")
    }

    private static func firstLine(in bytes: [UInt8], _ accept: (String) -> Bool) -> String? {
        var start = 0
        while let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) {
            let line = String(decoding: bytes[start..<newline], as: UTF8.self)
            if accept(line) { return line }
            start = newline + 1
        }
        return nil
    }
}
