import BLETesting
import Glibc
import JSON
import Testing

/// Plugins on disk as an attacker or a half-finished upgrade leaves them:
/// writable by others, owned by another user, truncated. The role fails with
/// a reason naming the path; the agent lives on.
@Suite("bleagent refuses untrusted and truncated plugins", .serialized, .timeLimit(.minutes(3)))
struct PluginTrustProcessTests {
    /// A directory `<temporary>/a/plugins` holding a copy of libDiagnostics.so (and libTrunc.so, its first
    /// 20,000 bytes), every component mode 0755 unless changed.
    struct Layout {
        let root = makeTemporaryDirectory()
        var parent: String { "\(root)/a" }
        var plugins: String { "\(root)/a/plugins" }
        var diagnostics: String { "\(plugins)/libDiagnostics.so" }

        init() {
            chmod(root, 0o755)
            mkdir(parent, 0o755)
            mkdir(plugins, 0o755)
            let library = (try? readFileBytes("\(buildDirectory)/libDiagnostics.so")) ?? []
            Self.write(library, to: diagnostics)
            Self.write(Array(library.prefix(20000)), to: "\(plugins)/libTrunc.so")
        }

        /// Writes `bytes` to a new file at `path`, mode 0755.
        private static func write(_ bytes: [UInt8], to path: String) {
            let fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0o755)
            _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            close(fd)
            chmod(path, 0o755)
        }

        func remove() { removeTree(root) }

        /// A central config loading `plugin` from the plugin directory.
        func config(plugin: String = "Diagnostics") -> String {
            RunningAgent.config(role: "central", plugins: (plugin, "Diagnostics"))
                .replacing(#""pluginDirectory": "\#(buildDirectory)""#, with: #""pluginDirectory": "\#(plugins)""#)
        }
    }

    /// The agent's role state after a reload to `config`.
    static func roleState(after config: String, on agent: RunningAgent) async throws -> JSON? {
        writeFile(agent.configPath, config)
        let reload = try await blectl(["--socket", agent.socketPath, "--json", "reload"])
        #expect(reload.status == 0, "\(reload)")
        return try JSON(parsing: reload.stdout)["roleState"]
    }

    @Test("a plugin from a directory only root or the agent's user can change loads (the baseline)")
    func trustedLoads() async throws {
        let layout = Layout()
        defer { layout.remove() }
        let agent = try await RunningAgent(config: layout.config())
        let state = try JSON(parsing: try await blectl(["--socket", agent.socketPath, "--json", "status"]).stdout)
        #expect(state["roleState"]?["state"] == "running", "\(state)")
        #expect(await agent.stop().status == 0)
    }

    @Test(
        "a world-writable plugin directory, a group-writable plugin file, a file owned by another user and a world-writable parent each fail the role with a reason naming the path"
    )
    func untrusted() async throws {
        let layout = Layout()
        defer { layout.remove() }
        let agent = try await RunningAgent(config: layout.config())
        let cases: [(change: () -> Void, undo: () -> Void, path: String, words: String)] = [
            ({ chmod(layout.plugins, 0o777) }, { chmod(layout.plugins, 0o755) }, layout.plugins, "writable by others"),
            (
                { chmod(layout.diagnostics, 0o775) }, { chmod(layout.diagnostics, 0o755) }, layout.diagnostics,
                "writable by its group"
            ),
            (
                { chown(layout.diagnostics, 65534, 65534) }, { chown(layout.diagnostics, 0, 0) }, layout.diagnostics,
                "owned by uid 65534"
            ),
            ({ chmod(layout.parent, 0o777) }, { chmod(layout.parent, 0o755) }, layout.parent, "writable by others"),
        ]
        // A reload restarts the role only when its settings change: alternate two spellings of the directory.
        for (index, item) in cases.enumerated() {
            item.change()
            let directory = index % 2 == 0 ? layout.plugins + "/" : layout.plugins
            let config = layout.config().replacing(
                #""pluginDirectory": "\#(layout.plugins)""#, with: #""pluginDirectory": "\#(directory)""#)
            let state = try await Self.roleState(after: config, on: agent)
            #expect(state?["state"] == "failed", "\(item.path): \(state ?? .null)")
            let reason = state?["reason"]?.stringValue ?? ""
            #expect(reason.contains(item.path) && reason.contains(item.words), "\(reason)")
            item.undo()
        }
        let state = try await Self.roleState(after: layout.config(), on: agent)
        #expect(state?["state"] == "running", "trusted again: \(state ?? .null)")
        #expect(await agent.stop().status == 0)
    }

    @Test("a truncated plugin named on reload fails the role with a reason instead of killing the agent")
    func truncatedOnReload() async throws {
        let layout = Layout()
        defer { layout.remove() }
        let agent = try await RunningAgent(config: layout.config())
        let state = try await Self.roleState(after: layout.config(plugin: "Trunc"), on: agent)
        #expect(state?["state"] == "failed", "\(state ?? .null)")
        let reason = state?["reason"]?.stringValue ?? ""
        #expect(reason.contains("\(layout.plugins)/libTrunc.so") && reason.contains("truncated"), "\(reason)")
        #expect(try await blectl(["--socket", agent.socketPath, "status"]).status == 0, "the agent lives")
        #expect(await agent.stop().status == 0)
    }

    @Test("a truncated plugin at start fails the role; the agent starts and serves")
    func truncatedAtStart() async throws {
        let layout = Layout()
        defer { layout.remove() }
        let agent = try await RunningAgent(config: layout.config(plugin: "Trunc"))
        let status = try JSON(parsing: try await blectl(["--socket", agent.socketPath, "--json", "status"]).stdout)
        #expect(status["roleState"]?["state"] == "failed", "\(status)")
        #expect(await agent.stop().status == 0)
    }
}
