import BLETesting
import IO
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("regular files, atomic replacement and child processes", .timeLimit(.minutes(1)))
struct FilesAndProcessesTests {
    @Test("a FIFO, a device and a directory are refused at once, named for what they are; a regular file is read")
    func onlyRegularFilesAreRead() throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let fifo = "\(scratch.path)/fifo"
        try #require(mkfifo(fifo, 0o600) == 0)
        #expect(throws: SystemError.notRegularFile(fifo, kind: "a FIFO")) { try RegularFile.read(fifo, limit: 64) }
        #expect(throws: SystemError.notRegularFile("/dev/zero", kind: "a character device")) {
            try RegularFile.read("/dev/zero", limit: 64)
        }
        #expect(throws: SystemError.notRegularFile(scratch.path, kind: "a directory")) {
            try RegularFile.read(scratch.path, limit: 64)
        }
        let file = "\(scratch.path)/file"
        try AtomicFile.replace(file, with: Array("hello".utf8), temporary: "\(file).tmp")
        try AtomicFile.syncDirectory(scratch.path)
        #expect(try RegularFile.read(file, limit: 64) == Array("hello".utf8))
        #expect(throws: SystemError.self) { try RegularFile.read(file, limit: 2) }
        #expect(try RegularFile.readIfPresent("\(scratch.path)/missing", limit: 64) == nil)
    }

    @Test("a child's output is collected on the loop and its exit status awaited")
    func childOutputAndExit() async throws {
        let child = try await ChildProcess.spawn(
            "/bin/sh", ["-c", "echo hello; echo oops >&2; exit 3"], standardOutput: .collect(limit: 1024),
            standardError: .collect(limit: 1024))
        let status = await child.wait()
        #expect(status.code == 3 && status.shellStatus == 3)
        #expect(await child.standardOutput?.waitForEnd(timeout: .seconds(30)) == true)
        #expect(child.standardOutput?.text == "hello\n")
        #expect(await child.standardError?.wait(timeout: .seconds(30)) { $0 == Array("oops\n".utf8) } == true)
        #expect(!child.isRunning)
    }

    @Test("a child gets descriptors 0, 1 and 2 only, also where the parent holds one left inheritable")
    func childInheritsOnlyStandardDescriptors() async throws {
        // A plain pipe(2) is inheritable, as libraries (libmosquitto's sockets) leave theirs.
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        defer { for end in ends { close(end) } }
        let probe = ends.map { "[ -e /proc/self/fd/\($0) ] && echo open \($0)" }.joined(separator: "; ")
        let child = try await ChildProcess.spawn(
            "/bin/sh", ["-c", probe + "; ls /proc/self/fd | wc -l"], standardOutput: .collect(limit: 1024))
        #expect(await child.wait().code == 0)
        #expect(await child.standardOutput?.waitForEnd(timeout: .seconds(30)) == true)
        // ls sees 0, 1, 2 and the directory it reads, nothing else.
        #expect(child.standardOutput?.text == "4\n", "\(child.standardOutput?.text ?? "")")
    }

    @Test("a program that cannot be executed is an error of execve, and nothing is left running")
    func execFailureIsReported() async throws {
        do {
            _ = try await ChildProcess.spawn("/nonexistent/program", [])
            Issue.record("spawned a missing program")
        } catch {
            #expect(error.operation == "execve" && error.errno == .noSuchFile, "\(error)")
        }
    }

    @Test("terminate sends SIGTERM, then SIGKILL after the grace; releasing a running child returns at once")
    func terminateAndRelease() async throws {
        // No child here inherits the test process's standard error: a survivor holding it would keep `swift test`,
        // which reads it to its end, waiting for the child's ten minutes.
        let patient = try await ChildProcess.spawn("/bin/sleep", ["600"], standardError: .null)
        #expect(await patient.terminate(within: .seconds(30)).signal == SIGTERM)
        // The shell becomes the sleep (exec), which keeps SIGTERM ignored: SIGKILL ends it, and no orphan is left.
        let stubborn = try await ChildProcess.spawn(
            "/bin/sh", ["-c", "trap '' TERM; echo ready; exec sleep 600"],
            standardOutput: .collect(limit: 64), standardError: .null)
        #expect(await stubborn.standardOutput?.wait(timeout: .seconds(30)) { $0.count >= 6 } == true)
        #expect(await stubborn.terminate(within: .milliseconds(200)).signal == SIGKILL)
        var pid: Int32 = 0
        let clock = ContinuousClock()
        let elapsed = try await clock.measure {
            let dropped = try await ChildProcess.spawn("/bin/sleep", ["600"], standardError: .null)
            pid = dropped.pid
        }
        #expect(elapsed < .seconds(5), "releasing a running child did not wait for it")
        #expect(await ChildProcess.waitForExit(of: pid, timeout: .seconds(30)), "the released child was stopped")
    }
}
