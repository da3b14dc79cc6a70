import BLETesting
import Glibc
import IO
import JSON
import Testing

/// The repository's root directory (this file is Tests/BlectlTests/ExternalPluginTests.swift).
let repositoryRoot: String = {
    var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(3)
    return parts.joined(separator: "/")
}()

/// Runs a command to completion (a compiler has no deadline: a silence of an hour is allowed) with its output
/// appended to `log`; returns its exit status. The exit is awaited on the shared loop.
func runToCompletion(_ arguments: [String], log: String) async -> Int32 {
    let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
    guard
        let run = try? await TestProcess(
            arguments[0], Array(arguments.dropFirst()), environment: ["PATH": "/opt/swift/usr/bin:\(path)"],
            inheritEnvironment: false)
    else { return -1 }
    let result = await run.finish(silence: .seconds(3600))
    if let file = try? FileDescriptor.open(log, .writeOnly, options: [.create, .append], permissions: 0o644) {
        try? file.writeAll(Array((result.output + result.errors).utf8))
        file.close()
    }
    return result.status
}

/// The text of a file ("" if it cannot be read).
func readText(_ path: String) -> String {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return "" }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while case let count = read(fd, &chunk, chunk.count), count > 0 { bytes += chunk[..<count] }
    return String(decoding: bytes, as: UTF8.self)
}

@Suite("a plugin built outside the repository", .serialized)
struct ExternalPluginTests {
    @Test(
        "docs/examples/external-plugin builds with swiftc against the installed core and runs in bleagent"
    )
    func buildAndLoad() async throws {
        let work = makeTemporaryDirectory()
        defer { removeTree(work) }
        let log = "\(work)/build.log"
        let installed = await runToCompletion(
            ["bash", "\(repositoryRoot)/scripts/install-core.sh", "\(work)/prefix", buildDirectory], log: log)
        let built = await runToCompletion(
            ["bash", "\(repositoryRoot)/docs/examples/external-plugin/build.sh", "\(work)/prefix", "\(work)/plugins"],
            log: log)
        #expect(installed == 0 && built == 0, "\(readText(log))")
        guard installed == 0 && built == 0 else { return }

        let agent = try await RunningAgent(
            config: """
                {"version":1,"role":"peripheral","backend":"sim","control":{"socket":"run/control.sock"},
                 "restore":{"stateDirectory":"state"},"pluginDirectory":"\(work)/plugins",
                 "sim":{"scenario":"\(repositoryRoot)/sim/scenarios/default.json"},
                 "roles":{"peripheral":{"plugin":"HelloPlugin","config":{"greeting":"hej"}}}}
                """)
        #expect(agent.readyMessage == "READY=1\nSTATUS=peripheral role running (config \(agent.configPath))")
        let greet = try await blectl([
            "--socket", agent.socketPath, "--json", "call", "hello.greet", #"{"name":"lane 7"}"#,
        ])
        #expect(greet.status == 0)
        #expect(greet.stdout == #"{"greeting":"hej, lane 7","role":"peripheral"}"# + "\n")
        let bad = try await blectl(["--socket", agent.socketPath, "call", "hello.greet", "{}"])
        #expect(bad.status == 1)
        #expect(bad.stderr == "blectl: agent error: name: missing required param (-32602)\n")
        let wrong = try await blectl(["--socket", agent.socketPath, "call", "hello.greet", #"{"name":7,"nam":1}"#])
        #expect(
            wrong.stderr == """
                blectl: agent error: nam: unknown param (and 1 more in data.errors) (-32602)
                  nam: unknown param
                  name: expected a non-empty string of at most 64 bytes, found the integer 7

                """)
        #expect(await agent.stop().status == 0)
    }
}
