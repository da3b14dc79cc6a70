import AgentCore
import BLETesting
import ControlProtocol
import JSON
import RoleKit
import Testing

@Suite("role host")
struct RoleHostTests {
    let registry = MethodRegistry()
    let bus = EventBus()
    let directory = TemporaryDirectory()

    func makeHost() -> RoleHost {
        RoleHost(loader: PluginLoader(), registry: registry, bus: bus, log: .discard)
    }

    @Test("starts the role's plugin with its methods, switches role on apply, and stops it with its methods removed")
    func startSwitchStop() async throws {
        defer { directory.remove() }
        let recorder = EventRecorder(bus)
        let host = makeHost()
        let plugins: [AgentConfig.Role: (String, JSON)] = [
            .central: ("Diagnostics", ["heartbeatSeconds": 0]), .peripheral: ("PeripheralOnlyPlugin", [:]),
        ]
        await host.apply(try hostConfig(role: .central, plugins: plugins, stateDirectory: directory.path), trigger: "t")
        #expect(host.status == RoleStatus(phase: .running, role: .central, plugin: "Diagnostics"))
        #expect(registry.methods == ["diag.ble", "diag.echo", "diag.ping"])
        let pong = try await callMethod(registry, "diag.ping")
        #expect(pong == ["pong": true, "plugin": "Diagnostics", "role": "central", "starts": 1])
        #expect(try await callMethod(registry, "diag.echo", ["x": [1]]) == ["x": [1]])

        await host.apply(
            try hostConfig(role: .peripheral, plugins: plugins, stateDirectory: directory.path), trigger: "t")
        #expect(host.status == RoleStatus(phase: .running, role: .peripheral, plugin: "PeripheralOnlyPlugin"))
        #expect(registry.methods == [])

        await host.stop(trigger: "t")
        #expect(host.status == RoleStatus(phase: .stopped, role: .peripheral, plugin: "PeripheralOnlyPlugin"))
        // Stopped for good (the agent is shutting down): a late reload starts nothing.
        await host.apply(try hostConfig(role: .central, plugins: plugins, stateDirectory: directory.path), trigger: "t")
        #expect(host.status.phase == .stopped)
        #expect(
            recorder.rolePhases == [
                "starting", "running", "stopping", "stopped", "starting", "running", "stopping", "stopped",
            ])
    }

    @Test("a reload with unchanged settings keeps the running plugin; a new plugin config restarts it")
    func restartOnlyOnChange() async throws {
        defer { directory.remove() }
        let recorder = EventRecorder(bus)
        let host = makeHost()
        let first = try hostConfig(
            role: .central, plugins: [.central: ("Diagnostics", ["heartbeatSeconds": 0])],
            stateDirectory: directory.path)
        await host.apply(first, trigger: "start")
        await host.apply(first, trigger: "SIGHUP")
        #expect(recorder.rolePhases == ["starting", "running"])
        #expect(try await callMethod(registry, "diag.ping")["starts"] == 1)
        let second = try hostConfig(
            role: .central, plugins: [.central: ("Diagnostics", ["heartbeatSeconds": 3600])],
            stateDirectory: directory.path)
        await host.apply(second, trigger: "SIGHUP")
        #expect(recorder.rolePhases == ["starting", "running", "stopping", "stopped", "starting", "running"])
        // The start counter lives in the plugin's state directory and survived the restart.
        #expect(try await callMethod(registry, "diag.ping")["starts"] == 2)
        await host.stop(trigger: "t")
    }

    @Test("a plugin that cannot start leaves the role failed with the reason and an event; a later apply recovers")
    func failureAndRecovery() async throws {
        defer { directory.remove() }
        let recorder = EventRecorder(bus)
        let host = makeHost()
        let bad = try hostConfig(
            role: .central, plugins: [.central: ("Diagnostics", ["heartbeatSeconds": "often", "colour": 1])],
            stateDirectory: directory.path)
        await host.apply(bad, trigger: "start")
        let reason =
            "plugin \"Diagnostics\" rejected its config: config.colour: unknown field; config.heartbeatSeconds: "
            + "expected an integer from 0 to 86400, found the string \"often\""
        #expect(host.status == RoleStatus(phase: .failed, role: .central, plugin: "Diagnostics", reason: reason))
        #expect(registry.methods == [])
        let failed = recorder.all.last { $0.data["roleState"]?["state"] == "failed" }
        #expect(failed?.data["roleState"]?["reason"] == .string(reason))

        let missing = try hostConfig(
            role: .central, plugins: [.central: ("NoSuchPlugin", [:])], stateDirectory: directory.path)
        await host.apply(missing, trigger: "SIGHUP")
        #expect(
            host.status.reason
                == "cannot load plugin \"NoSuchPlugin\": no plugin file \(buildDirectory)/libNoSuchPlugin.so"
        )

        let good = try hostConfig(
            role: .central, plugins: [.central: ("Diagnostics", [:])], stateDirectory: directory.path)
        await host.apply(good, trigger: "SIGHUP")
        #expect(host.status == RoleStatus(phase: .running, role: .central, plugin: "Diagnostics"))
        await host.stop(trigger: "t")
    }

    @Test("after a lost backend, restarts wait 1 s, doubling up to 30 s")
    func restartPauses() {
        let pauses = (1...8).map { RoleHost.restartPause(attempt: $0).components.seconds }
        #expect(pauses == [1, 2, 4, 8, 16, 30, 30, 30])
    }

    @Test("plugin method errors reach the client with the plugin's code; core codes are not forged")
    func pluginErrors() async throws {
        defer { directory.remove() }
        let host = makeHost()
        let config = try hostConfig(
            role: .central, plugins: [.central: ("OneCopyProbe", [:])], stateDirectory: directory.path)
        let recorder = EventRecorder(bus)
        await host.apply(config, trigger: "start")
        do {
            _ = try await callMethod(registry, "probe.fail")
            Issue.record("probe.fail returned")
        } catch let error as RPCError {
            #expect(error == RPCError(RPCErrorCode(rawValue: 4242), "probe failure", data: ["from": "plugin"]))
        }
        do {
            _ = try await callMethod(registry, "probe.parse")
            Issue.record("probe.parse returned")
        } catch let error as RPCError {
            #expect(error.code == .internalError)
            #expect(error.message.hasPrefix("probe.parse failed: "))
        }
        let pluginEvent = recorder.all.first { $0.kind == .plugin }
        #expect(pluginEvent?.data == ["namespace": "probe", "name": "started", "data": ["role": "central"]])
        #expect(
            RPCError(pluginError: PluginMethodError(code: -32001, "forged"))
                == RPCError(.internalError, "forged (the plugin used the reserved code -32001)"))
        #expect(
            RPCError(pluginError: .invalidParams("x: expected a string"))
                == RPCError(.invalidParams, "x: expected a string"))
        await host.stop(trigger: "t")
    }

    @Test(
        "a start that never returns fails the role at its deadline; a stop that never returns is abandoned at its deadline"
    )
    func deadlines() async throws {
        defer { directory.remove() }
        var options = RoleHost.Options()
        // The plugin never returns: the deadline is the only way out, whatever the machine's speed.
        options.startDeadline = .seconds(1)
        options.stopDeadline = .seconds(1)
        let host = RoleHost(loader: PluginLoader(), registry: registry, bus: bus, options: options, log: .discard)
        await host.apply(
            try hostConfig(
                role: .central, plugins: [.central: ("StuckPlugin", ["hang": "start"])], stateDirectory: directory.path),
            trigger: "t")
        #expect(
            host.status
                == RoleStatus(
                    phase: .failed, role: .central, plugin: "StuckPlugin",
                    reason: "plugin \"StuckPlugin\" did not start within 1 s"))
        await host.apply(
            try hostConfig(
                role: .central, plugins: [.central: ("StuckPlugin", ["hang": "stop"])], stateDirectory: directory.path),
            trigger: "t")
        #expect(host.status.phase == .running)
        await host.stop(trigger: "t")
        #expect(
            host.status
                == RoleStatus(
                    phase: .stopped, role: .central, plugin: "StuckPlugin",
                    reason: "plugin \"StuckPlugin\" did not stop within 1 s; continuing without it"))
    }
}
