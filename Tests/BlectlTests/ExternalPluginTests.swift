import Glibc
import JSON
import Testing

/// The repository's root directory (this file is Tests/BlectlTests/ExternalPluginTests.swift).
let repositoryRoot: String = {
    var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(3)
    return parts.joined(separator: "/")
}()

/// Runs a command to completion (a compiler has no deadline) with its output
/// in `log`; returns its exit status.
func runToCompletion(_ arguments: [String], log: String) -> Int32 {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    let argv = arguments.map { strdup($0) } + [nil]
    let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
    let envp = [strdup("PATH=/opt/swift/usr/bin:\(path)"), nil]
    var pid: pid_t = 0
    let result = posix_spawnp(&pid, arguments[0], &actions, nil, argv, envp)
    posix_spawn_file_actions_destroy(&actions)
    for pointer in argv + envp { free(pointer) }
    guard result == 0 else { return -1 }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
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
    func buildAndLoad() throws {
        let work = makeTemporaryDirectory()
        defer { _ = "rm -rf '\(work)'".withCString { system($0) } }
        let log = "\(work)/build.log"
        let installed = runToCompletion(
            ["bash", "\(repositoryRoot)/scripts/install-core.sh", "\(work)/prefix", buildDirectory], log: log)
        let built = runToCompletion(
            ["bash", "\(repositoryRoot)/docs/examples/external-plugin/build.sh", "\(work)/prefix", "\(work)/plugins"],
            log: log)
        #expect(installed == 0 && built == 0, "\(readText(log))")
        guard installed == 0 && built == 0 else { return }

        let agent = try RunningAgent(
            config: """
                {"version":1,"role":"peripheral","backend":"sim","control":{"socket":"run/control.sock"},
                 "restore":{"stateDirectory":"state"},"pluginDirectory":"\(work)/plugins",
                 "sim":{"scenario":"\(repositoryRoot)/sim/scenarios/default.json"},
                 "roles":{"peripheral":{"plugin":"HelloPlugin","config":{"greeting":"hej"}}}}
                """)
        #expect(agent.readyMessage == "READY=1\nSTATUS=peripheral role running (config \(agent.configPath))")
        let greet = try blectl(["--socket", agent.socketPath, "--json", "call", "hello.greet", #"{"name":"lane 7"}"#])
        #expect(greet.status == 0)
        #expect(greet.stdout == #"{"greeting":"hej, lane 7","role":"peripheral"}"# + "\n")
        let bad = try blectl(["--socket", agent.socketPath, "call", "hello.greet", "{}"])
        #expect(bad.status == 1)
        #expect(bad.stderr == "blectl: agent error: name: missing required param (-32602)\n")
        let wrong = try blectl(["--socket", agent.socketPath, "call", "hello.greet", #"{"name":7,"nam":1}"#])
        #expect(
            wrong.stderr == """
                blectl: agent error: nam: unknown param (and 1 more in data.errors) (-32602)
                  nam: unknown param
                  name: expected a non-empty string of at most 64 bytes, found the integer 7

                """)
        #expect(agent.stop().status == 0)
    }
}
