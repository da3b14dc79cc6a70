import BLETesting
import Glibc
import JSON
import Testing

@Suite("bleagent as a process", .serialized)
struct AgentProcessTests {
    @Test("an invalid config prints every field error on stderr, exits 78 and starts nothing")
    func invalidConfig() async throws {
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }
        writeFile(
            "\(directory)/roles.json",
            #"{"version":1,"role":"central","control":{"socket":"s.sock","mode":"999"},"roles":{"central":{"plugin":5}},"x":1}"#
        )
        let result = try await Child("\(buildDirectory)/bleagent", ["--config", "\(directory)/roles.json"]).finish()
        #expect(result.status == 78)
        #expect(result.stdout == "")
        #expect(
            result.stderr == """
                bleagent: invalid config; nothing started
                \(directory)/roles.json: control.mode: "999" is not an octal file mode (three or four digits 0-7, such as "0600")
                \(directory)/roles.json: roles.central.plugin: expected a string, found an integer
                \(directory)/roles.json: x: unknown field

                """)
        #expect(!fileExists("\(directory)/s.sock"))
    }

    @Test("a closed standard error does not kill the agent: its log writes fail (EPIPE) and it serves on")
    func closedStandardErrorIsNotFatal() async throws {
        let agent = try await RunningAgent()
        #expect(agent.readyMessage?.contains("READY=1") == true)
        agent.child.closeStandardError()
        // A reload logs (to the closed stderr) that it reloads and that the role failed to load again.
        #expect(try await blectl(["--socket", agent.socketPath, "reload"]).status == 0)
        let status = try await blectl(["--socket", agent.socketPath, "--json", "status"])
        #expect(status.status == 0, "the agent died: \(status)")
        #expect(await agent.stop().status == 0)
    }

    @Test("--check-config validates without starting; an unknown argument is a usage error (64)")
    func checkConfigAndUsage() async throws {
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }
        writeFile(
            "\(directory)/roles.json",
            RunningAgent.config(role: "central", plugins: ("Diagnostics", "SensorAggregator"))
                .replacing(
                    #""plugin": "SensorAggregator""#,
                    with:
                        #""plugin": "SensorAggregator", "config": {"sensors": [{"id": "t", "kind": "temperature", "source": {"type": "simulated", "base": 20}}], "advertising": {"localName": "n"}}"#
                ))
        let check = try await Child(
            "\(buildDirectory)/bleagent", ["--check-config", "--config", "\(directory)/roles.json"]
        )
        .finish()
        #expect(check.status == 0, "\(check)")
        #expect(
            check.stdout == """
                \(directory)/roles.json: valid (role central, backend sim)
                  roles.central: plugin Diagnostics loaded, its config checked
                  roles.peripheral: plugin SensorAggregator loaded, its config checked

                """)
        #expect(!fileExists("\(directory)/run/control.sock"))
        let usage = try await Child("\(buildDirectory)/bleagent", ["--frobnicate"]).finish()
        #expect(usage.status == 64)
        #expect(
            usage.stderr.hasPrefix(
                "bleagent: unknown argument \"--frobnicate\"\n\nusage: bleagent [--config PATH] [--log-level LEVEL]\n"))
    }

    @Test("a second agent on the same socket refuses to start (exit 1) and the first keeps serving")
    func secondAgentRefused() async throws {
        let agent = try await RunningAgent()
        let second = try await Child("\(buildDirectory)/bleagent", ["--config", agent.configPath]).finish()
        #expect(second.status == 1)
        #expect(
            second.stderr
                == "bleagent: cannot start: another bleagent (pid \(agent.child.pid)) uses \(agent.directory)/state "
                + "(restore.stateDirectory); one agent per directory: give this one its own restore.stateDirectory "
                + "or stop the other\n")
        #expect(try await blectl(["--socket", agent.socketPath, "status"]).status == 0)
        #expect(await agent.stop().status == 0)
    }

    @Test(
        "start-up sends READY=1 to NOTIFY_SOCKET (abstract) once the socket exists; SIGTERM sends STOPPING=1, exits 0 and removes the socket"
    )
    func readyAndStop() async throws {
        let agent = try await RunningAgent()
        #expect(agent.readyMessage == "READY=1\nSTATUS=central role failed (config \(agent.configPath))")
        var status = stat()
        #expect(stat(agent.socketPath, &status) == 0)
        #expect(status.st_mode & 0o7777 == 0o600)
        agent.signal(SIGTERM)
        #expect(await agent.notify.next() == "STOPPING=1")
        let result = await agent.child.finish()
        #expect(result.status == 0)
        #expect(!fileExists(agent.socketPath))
        #expect(result.stderr.hasSuffix("bleagent: stopping: SIGTERM\nbleagent: stopped\n"))
    }

    @Test("SIGHUP with a valid config switches to it, with RELOADING=1 (MONOTONIC_USEC) then READY=1")
    func reloadValid() async throws {
        let agent = try await RunningAgent()
        writeFile(agent.configPath, RunningAgent.config(role: "peripheral"))
        agent.signal(SIGHUP)
        let reloading = await agent.notify.next() ?? ""
        #expect(reloading.hasPrefix("RELOADING=1\nMONOTONIC_USEC="))
        #expect(UInt64(reloading.split(separator: "=").last ?? "") != nil)
        #expect(await agent.notify.next() == "READY=1\nSTATUS=peripheral role failed (config \(agent.configPath))")
        let status = try await blectl(["--socket", agent.socketPath, "--json", "status"])
        #expect(status.status == 0)
        #expect((try? JSON(parsing: status.stdout))?["role"] == "peripheral")
        #expect((try? JSON(parsing: status.stdout))?["plugin"] == "SensorAggregator")
        #expect(await agent.stop().status == 0)
    }

    @Test("SIGHUP with an invalid config keeps the running config and logs every field error")
    func reloadInvalid() async throws {
        let agent = try await RunningAgent()
        writeFile(agent.configPath, #"{"version":1,"role":"peripheral","roles":{"central":{"plugin":"P"}}}"#)
        agent.signal(SIGHUP)
        #expect(await agent.notify.next()?.hasPrefix("RELOADING=1\n") == true)
        #expect(await agent.notify.next() == "READY=1\nSTATUS=central role failed (config \(agent.configPath))")
        let status = try await blectl(["--socket", agent.socketPath, "--json", "status"])
        #expect((try? JSON(parsing: status.stdout))?["role"] == "central")
        let stopped = await agent.stop()
        #expect(
            stopped.stderr.contains(
                "bleagent: warning: reload (SIGHUP) rejected; keeping the running config\n"
                    + "bleagent: warning: \(agent.configPath): roles.peripheral: missing required field\n"))
    }

    @Test("blectl refused by the agent (control.allowedUids) says why and exits 69, every time")
    func refusedClient() async throws {
        let other = geteuid() == 65534 ? 65533 : 65534
        let agent = try await RunningAgent(
            config: RunningAgent.config(role: "central", extra: #", "allowedUids": [\#(other)]"#))
        // The agent writes its refusal and closes at once; whether blectl's request went out
        // before the close or failed on it (EPIPE), the reason is what it reports.
        for _ in 0..<20 {
            let refused = try await blectl(["--socket", agent.socketPath, "status"])
            #expect(refused.status == 69)
            #expect(
                refused.stderr
                    == "blectl: agent unreachable: the agent refused the connection: uid \(geteuid()) is not allowed (control.allowedUids) (-32002)\n"
            )
        }
        #expect(await agent.stop().status == 0)
    }

    @Test(
        "contrib/systemd/bleagent.service passes systemd-analyze verify (ExecStart pointed at the built agent), is Type=notify, reloads with SIGHUP, does not restart on an invalid config (78) and runs hardened as bleagent"
    )
    func systemdUnit() async throws {
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }
        let unit = readText("\(repositoryRoot)/contrib/systemd/bleagent.service")
        let lines = Set(unit.split(separator: "\n").map(String.init))
        for line in [
            "Type=notify", "NotifyAccess=main", "ExecStart=/usr/bin/bleagent --config /etc/bleagent/roles.json",
            "ExecReload=/bin/kill -HUP $MAINPID", "RestartPreventExitStatus=78", "KillSignal=SIGTERM",
            "User=bleagent", "Group=bleagent", "NoNewPrivileges=yes", "CapabilityBoundingSet=", "ProtectSystem=strict",
            "ProtectHome=yes", "PrivateTmp=yes", "RestrictAddressFamilies=AF_UNIX", "SystemCallFilter=@system-service",
            "RuntimeDirectory=bleagent", "StateDirectory=bleagent",
        ] {
            #expect(lines.contains(line), "\(line)")
        }
        writeFile(
            "\(directory)/roles.json", RunningAgent.config(role: "central", plugins: ("Diagnostics", "Diagnostics")))
        let local = unit.replacing(
            "ExecStart=/usr/bin/bleagent --config /etc/bleagent/roles.json",
            with: "ExecStart=\(buildDirectory)/bleagent --config \(directory)/roles.json")
        writeFile("\(directory)/bleagent.service", local)
        // --man=no: the man pages the unit names exist once the package is installed (Tests/VM/package.sh).
        let verify = try await Child(
            "/usr/bin/systemd-analyze", ["verify", "--man=no", "\(directory)/bleagent.service"]
        )
        .finish()
        #expect(verify.status == 0 && verify.stderr == "", "\(verify)")
        // The ExecStart's arguments are the agent's own: they name a config it accepts.
        let check = try await Child(
            "\(buildDirectory)/bleagent", ["--config", "\(directory)/roles.json", "--check-config"]
        )
        .finish()
        #expect(check.status == 0, "\(check)")
    }
}
