import BLETesting
import Glibc
import JSON
import Testing

@Suite("bleagent runs role plugins", .serialized)
struct RoleProcessTests {
    @Test(
        "central with the Diagnostics plugin answers diag.ping; SIGHUP switches to peripheral in the same process; SIGTERM stops the plugin cleanly"
    )
    func startSwitchStop() async throws {
        let agent = try await RunningAgent(
            config: RunningAgent.config(role: "central", plugins: ("Diagnostics", "Diagnostics")))
        #expect(agent.readyMessage == "READY=1\nSTATUS=central role running (config \(agent.configPath))")
        let ping = try await blectl(["--socket", agent.socketPath, "--json", "call", "diag.ping"])
        #expect(ping.status == 0)
        #expect(ping.stdout == #"{"pong":true,"plugin":"Diagnostics","role":"central","starts":1}"# + "\n")
        let echo = try await blectl(["--socket", agent.socketPath, "--json", "call", "diag.echo", #"{"lane":7}"#])
        #expect(echo.stdout == #"{"lane":7}"# + "\n")

        writeFile(agent.configPath, RunningAgent.config(role: "peripheral", plugins: ("Diagnostics", "Diagnostics")))
        agent.signal(SIGHUP)
        #expect(await agent.notify.next()?.hasPrefix("RELOADING=1\n") == true)
        #expect(await agent.notify.next() == "READY=1\nSTATUS=peripheral role running (config \(agent.configPath))")
        let status = try await blectl(["--socket", agent.socketPath, "--json", "status"])
        let json = try JSON(parsing: status.stdout)
        #expect(json["role"] == "peripheral")
        #expect(json["pid"] == .int(Int64(agent.child.pid)), "the same process")
        #expect(json["roleState"] == ["state": "running", "role": "peripheral", "plugin": "Diagnostics"])
        let again = try await blectl(["--socket", agent.socketPath, "--json", "call", "diag.ping"])
        #expect(again.stdout == #"{"pong":true,"plugin":"Diagnostics","role":"peripheral","starts":2}"# + "\n")

        let stopped = await agent.stop()
        #expect(stopped.status == 0)
        #expect(
            stopped.stderr.contains(
                """
                bleagent: stopping: SIGTERM
                bleagent: role peripheral (plugin Diagnostics): stopping
                bleagent: [Diagnostics] info: stopped
                bleagent: role peripheral (plugin Diagnostics): stopped
                bleagent: sim: stopping blesim
                """), "\(stopped.stderr)")
        #expect(stopped.stderr.hasSuffix("bleagent: stopped\n"))
    }

    @Test("a plugin that fails is reported in status with its reason; the agent keeps serving; a reload recovers")
    func failedPluginThenRecovery() async throws {
        let agent = try await RunningAgent(
            config: RunningAgent.config(role: "peripheral", plugins: ("Diagnostics", "PeripheralOnlyPluginX")))
        let status = try await blectl(["--socket", agent.socketPath, "status"])
        #expect(status.status == 0)
        #expect(
            status.stdout.contains(
                "state    failed: cannot load plugin \"PeripheralOnlyPluginX\": no plugin file \(buildDirectory)/libPeripheralOnlyPluginX.so\n"
            ))
        let wrongRole = RunningAgent.config(role: "central", plugins: ("PeripheralOnlyPlugin", "PeripheralOnlyPlugin"))
        writeFile(agent.configPath, wrongRole)
        let reload = try await blectl(["--socket", agent.socketPath, "--json", "reload"])
        #expect(reload.status == 0)
        #expect(
            (try JSON(parsing: reload.stdout))["roleState"]?["reason"]
                == .string(
                    "cannot load plugin \"PeripheralOnlyPlugin\": \(buildDirectory)/libPeripheralOnlyPlugin.so serves the peripheral role only, not central"
                ))
        writeFile(
            agent.configPath, RunningAgent.config(role: "peripheral", plugins: ("Diagnostics", "PeripheralOnlyPlugin")))
        let recovered = try await blectl(["--socket", agent.socketPath, "--json", "reload"])
        #expect((try JSON(parsing: recovered.stdout))["roleState"]?["state"] == "running")
        #expect(await agent.stop().status == 0)
    }

    @Test(
        "a reload with an invalid config keeps the running plugin, not restarted (diag.ping's start count unchanged); SIGINT stops it cleanly as SIGTERM does"
    )
    func invalidReloadKeepsThePluginThenSIGINT() async throws {
        let config = RunningAgent.config(role: "central", plugins: ("Diagnostics", "Diagnostics"))
        let agent = try await RunningAgent(config: config)
        let socket = ["--socket", agent.socketPath]
        #expect(agent.readyMessage == "READY=1\nSTATUS=central role running (config \(agent.configPath))")
        let ping = #"{"pong":true,"plugin":"Diagnostics","role":"central","starts":1}"# + "\n"
        #expect(try await blectl(socket + ["--json", "call", "diag.ping"]).stdout == ping)

        // Invalid: the peripheral role named without settings. Through SIGHUP and through agent.reload.
        writeFile(
            agent.configPath,
            config.replacing(#""role": "central""#, with: #""role": "peripheral""#)
                .replacing(#""peripheral": { "plugin": "Diagnostics" }"#, with: #""x": 1"#))
        agent.signal(SIGHUP)
        #expect(await agent.notify.next()?.hasPrefix("RELOADING=1\n") == true)
        #expect(await agent.notify.next() == "READY=1\nSTATUS=central role running (config \(agent.configPath))")
        let reload = try await blectl(socket + ["reload"])
        #expect(reload.status == 1)
        #expect(
            reload.stderr.hasPrefix("blectl: agent error: the config is invalid; the running config is kept (-32010)\n")
        )
        #expect(await agent.notify.next()?.hasPrefix("RELOADING=1\n") == true)
        #expect(await agent.notify.next() == "READY=1\nSTATUS=central role running (config \(agent.configPath))")
        let status = try JSON(parsing: try await blectl(socket + ["--json", "status"]).stdout)
        #expect(status["roleState"] == ["state": "running", "role": "central", "plugin": "Diagnostics"])
        #expect(try await blectl(socket + ["--json", "call", "diag.ping"]).stdout == ping, "the same plugin instance")
        // No code from clients: a reload cannot name another config (and so another plugin directory).
        writeFile("\(agent.directory)/other.json", config.replacing(buildDirectory, with: "/tmp"))
        let named = try await blectl(
            socket + ["call", "agent.reload", #"{"config":"\#(agent.directory)/other.json"}"#])
        #expect(named.status == 1)
        #expect(
            named.stderr == "blectl: agent error: config: unknown param (this method takes none) (-32602)\n", "\(named)"
        )
        #expect(try await blectl(socket + ["--json", "call", "diag.ping"]).stdout == ping)

        agent.signal(SIGINT)
        #expect(await agent.notify.next() == "STOPPING=1")
        let stopped = await agent.child.finish()
        #expect(stopped.status == 0)
        #expect(!fileExists(agent.socketPath))
        #expect(
            stopped.stderr.contains(
                """
                bleagent: stopping: SIGINT
                bleagent: role central (plugin Diagnostics): stopping
                bleagent: [Diagnostics] info: stopped
                bleagent: role central (plugin Diagnostics): stopped
                bleagent: sim: stopping blesim
                """), "\(stopped.stderr)")
        #expect(stopped.stderr.hasSuffix("bleagent: stopped\n"))
    }
}
