import Glibc
import JSON
import Testing

@Suite("bleagent runs role plugins", .serialized)
struct RoleProcessTests {
    @Test(
        "central with the Diagnostics plugin answers diag.ping; SIGHUP switches to peripheral in the same process; SIGTERM stops the plugin cleanly"
    )
    func startSwitchStop() throws {
        let agent = try RunningAgent(
            config: RunningAgent.config(role: "central", plugins: ("Diagnostics", "Diagnostics")))
        #expect(agent.readyMessage == "READY=1\nSTATUS=central role running (config \(agent.configPath))")
        let ping = try blectl(["--socket", agent.socketPath, "--json", "call", "diag.ping"])
        #expect(ping.status == 0)
        #expect(ping.stdout == #"{"pong":true,"plugin":"Diagnostics","role":"central","starts":1}"# + "\n")
        let echo = try blectl(["--socket", agent.socketPath, "--json", "call", "diag.echo", #"{"lane":7}"#])
        #expect(echo.stdout == #"{"lane":7}"# + "\n")

        writeFile(agent.configPath, RunningAgent.config(role: "peripheral", plugins: ("Diagnostics", "Diagnostics")))
        agent.signal(SIGHUP)
        #expect(agent.notify.next()?.hasPrefix("RELOADING=1\n") == true)
        #expect(agent.notify.next() == "READY=1\nSTATUS=peripheral role running (config \(agent.configPath))")
        let status = try blectl(["--socket", agent.socketPath, "--json", "status"])
        let json = try JSON(parsing: status.stdout)
        #expect(json["role"] == "peripheral")
        #expect(json["pid"] == .int(Int64(agent.child.pid)), "the same process")
        #expect(json["roleState"] == ["state": "running", "role": "peripheral", "plugin": "Diagnostics"])
        let again = try blectl(["--socket", agent.socketPath, "--json", "call", "diag.ping"])
        #expect(again.stdout == #"{"pong":true,"plugin":"Diagnostics","role":"peripheral","starts":2}"# + "\n")

        let stopped = agent.stop()
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
    func failedPluginThenRecovery() throws {
        let agent = try RunningAgent(
            config: RunningAgent.config(role: "peripheral", plugins: ("Diagnostics", "PeripheralOnlyPluginX")))
        let status = try blectl(["--socket", agent.socketPath, "status"])
        #expect(status.status == 0)
        #expect(
            status.stdout.contains(
                "state    failed: cannot load plugin \"PeripheralOnlyPluginX\": no plugin file \(buildDirectory)/libPeripheralOnlyPluginX.so\n"
            ))
        let wrongRole = RunningAgent.config(role: "central", plugins: ("PeripheralOnlyPlugin", "PeripheralOnlyPlugin"))
        writeFile(agent.configPath, wrongRole)
        let reload = try blectl(["--socket", agent.socketPath, "--json", "reload"])
        #expect(reload.status == 0)
        #expect(
            (try JSON(parsing: reload.stdout))["roleState"]?["reason"]
                == .string(
                    "cannot load plugin \"PeripheralOnlyPlugin\": \(buildDirectory)/libPeripheralOnlyPlugin.so serves the peripheral role only, not central"
                ))
        writeFile(
            agent.configPath, RunningAgent.config(role: "peripheral", plugins: ("Diagnostics", "PeripheralOnlyPlugin")))
        let recovered = try blectl(["--socket", agent.socketPath, "--json", "reload"])
        #expect((try JSON(parsing: recovered.stdout))["roleState"]?["state"] == "running")
        #expect(agent.stop().status == 0)
    }
}
