import BLETesting
import Glibc
import JSON
import Testing

/// One agent per state directory and per runtime directory: a second agent
/// that would share either exits 1 naming the first one's pid, before it
/// touches anything.
@Suite("one bleagent per state and runtime directory", .serialized, .timeLimit(.minutes(3)))
struct StateLockProcessTests {
    /// Runs a second agent from its own directory with `config`; its result.
    static func second(_ config: String) async throws -> (status: Int32, stdout: String, stderr: String) {
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }
        writeFile("\(directory)/roles.json", config)
        let child = try await Child("\(buildDirectory)/bleagent", ["--config", "\(directory)/roles.json"])
        let result = await child.finish()
        #expect(!fileExists("\(directory)/run/control.sock"), "the second agent made no socket")
        return result
    }

    @Test("a second agent with its own socket but the same restore.stateDirectory exits 1 naming the holder's pid")
    func sameStateDirectory() async throws {
        let first = try await RunningAgent()
        let config = RunningAgent.config(role: "central").replacing(
            #""stateDirectory": "state""#, with: #""stateDirectory": "\#(first.directory)/state""#)
        let result = try await Self.second(config)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("\(first.directory)/state"), "\(result.stderr)")
        #expect(result.stderr.contains("pid \(first.child.pid)"), "\(result.stderr)")
        #expect(try await blectl(["--socket", first.socketPath, "status"]).status == 0, "the first agent serves on")
        #expect(await first.stop().status == 0)
    }

    @Test("a second agent with another state directory but the same sim.runtimeDirectory exits 1 naming the holder")
    func sameRuntimeDirectory() async throws {
        let first = try await RunningAgent()
        let config = RunningAgent.config(role: "central").replacing(
            #""sim": { "#, with: #""sim": { "runtimeDirectory": "\#(first.directory)/run/sim", "#)
        let result = try await Self.second(config)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("\(first.directory)/run/sim"), "\(result.stderr)")
        #expect(result.stderr.contains("pid \(first.child.pid)"), "\(result.stderr)")
        #expect(await first.stop().status == 0)
    }

    @Test("after the first agent stops, a new one takes the same directories")
    func freedAfterStop() async throws {
        let first = try await RunningAgent()
        let directory = first.directory
        #expect(await first.stop().status == 0)
        let config = RunningAgent.config(role: "central").replacing(
            #""stateDirectory": "state""#, with: #""stateDirectory": "\#(directory)/state""#)
        let next = try await RunningAgent(config: config)
        #expect(next.readyMessage?.contains("READY=1") == true, "\(next.child.stderrText)")
        #expect(await next.stop().status == 0)
    }
}
