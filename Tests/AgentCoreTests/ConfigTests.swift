import AgentCore
import JSON
import Testing

/// The directory of this file's fixtures.
let fixtures: String = {
    let file = #filePath
    return String(file[..<(file.lastIndex(of: "/") ?? file.endIndex)]) + "/Fixtures"
}()

/// The issue lines `AgentConfig.load` reports for a fixture.
func issues(_ fixture: String) -> [String] {
    do {
        _ = try AgentConfig.load(from: "\(fixtures)/\(fixture)")
        return []
    } catch {
        return error.issues.map(\.description)
    }
}

@Suite("roles.json validation")
struct ConfigTests {
    @Test("a full config loads, and relative paths resolve against the config file's directory")
    func fullConfig() throws {
        let config = try AgentConfig.load(from: "\(fixtures)/valid-full.json")
        #expect(config.file == "\(fixtures)/valid-full.json")
        #expect(config.role == .peripheral)
        #expect(config.backend == .sim)
        #expect(config.adapter == "hci1")
        #expect(config.restore.identifier == "lane-7")
        #expect(config.restore.stateDirectory == "\(fixtures)/state/lane-7")
        #expect(config.control.socketPath == "\(fixtures)/run/control.sock")
        #expect(config.control.mode == 0o660)
        #expect(config.control.allowedUids == [0, 1000])
        #expect(config.pluginDirectory == "/opt/bleagent/plugins")
        #expect(config.roles[.central]?.plugin == "PaymentTerminalScanner")
        #expect(config.roles[.central]?.config == .object(JSONObject()))
        #expect(config.selectedRole?.plugin == "SensorAggregator")
        #expect(config.selectedRole?.config == ["localName": "node", "nested": ["x": [1, 2]]])
    }

    @Test("the shipped roles.json is valid: the simulator, the central role, paths under the repository")
    func shippedConfig() throws {
        let repository = String(fixtures.dropLast("/Tests/AgentCoreTests/Fixtures".count))
        let config = try AgentConfig.load(from: "\(repository)/roles.json")
        #expect(config.backend == .sim)
        #expect(config.role == .central)
        #expect(config.control.socketPath == "\(repository)/.bleagent/control.sock")
        #expect(config.pluginDirectory == "\(repository)/.build/debug")
    }

    @Test("a minimal config gets the documented defaults")
    func defaults() throws {
        let config = try AgentConfig.load(from: "\(fixtures)/valid-minimal.json")
        #expect(config.backend == .bluez)
        #expect(config.adapter == "hci0")
        #expect(config.restore == AgentConfig.Restore(identifier: "bleagent", stateDirectory: "/var/lib/bleagent"))
        #expect(config.control.socketPath == "/run/bleagent/control.sock")
        #expect(config.control.mode == 0o600)
        #expect(config.control.allowedUids.isEmpty)
        #expect(config.pluginDirectory == "/usr/lib/bleagent/plugins")
        #expect(config.roles[.peripheral] == nil)
    }

    @Test("a relative config path resolves against the given working directory")
    func relativeConfigPath() throws {
        let config = try AgentConfig.load(from: "valid-minimal.json", currentDirectory: fixtures)
        #expect(config.file == "\(fixtures)/valid-minimal.json")
    }

    @Test("wrong types are all reported, each with its field path")
    func wrongTypes() {
        #expect(
            issues("wrong-types.json") == [
                "version: expected an integer, found a string",
                "role: \"observer\" is not one of \"central\" or \"peripheral\"",
                "backend: expected a string, found an integer",
                "adapter: must not be empty",
                "restore: expected an object, found a string",
                "control.socket: expected a string, found an integer",
                "control.mode: \"999\" is not an octal file mode (three or four digits 0-7, such as \"0600\")",
                "control.allowedUids: expected an array of user ids, found a string",
                "pluginDirectory: expected a string, found a boolean",
                "roles.central.plugin: expected a string, found an integer",
                "roles.central.config: expected an object, found an array",
            ])
    }

    @Test("unknown fields are reported at every level, not ignored")
    func unknownFields() {
        #expect(
            issues("unknown-fields.json") == [
                "control.sockt: unknown field",
                "roles.central.extra: unknown field",
                "roles.observer: unknown field",
                "colour: unknown field",
            ])
    }

    @Test("missing required fields are named")
    func missingFields() {
        #expect(
            issues("empty-object.json") == [
                "version: missing required field",
                "role: missing required field",
                "roles: missing required field",
            ])
    }

    @Test("the selected role must have settings")
    func missingSelectedRole() {
        #expect(issues("missing-selected-role.json") == ["roles.peripheral: missing required field"])
    }

    @Test(
        "sim settings resolve against the config's directory; defaults: the shipped scenario, a runtime directory beside the socket"
    )
    func simSettings() throws {
        let config = try AgentConfig.load(from: "\(fixtures)/valid-sim.json")
        #expect(config.sim.binary == "\(fixtures)/bin/blesim")
        #expect(config.sim.scenario == "\(fixtures)/scenarios/shop.json")
        #expect(config.sim.runtimeDirectory == "\(fixtures)/run/sim")
        #expect(config.sim.readyDeadline == .seconds(30))
        let defaults = try AgentConfig.load(from: "\(fixtures)/valid-minimal.json")
        #expect(defaults.sim.binary == nil)
        #expect(defaults.sim.scenario == "\(fixtures)/sim/scenarios/default.json")
        #expect(defaults.sim.dbusDaemon == "/usr/bin/dbus-daemon")
    }

    @Test("bad sim settings are reported with their field paths")
    func badSim() {
        #expect(
            issues("bad-sim.json") == [
                "sim.binary: expected a string, found an integer",
                "sim.runtimeDirectory: \"/tmp/a-directory-name-that-is-far-too-long-for-the-private-bus-socket-to-fit-under-it-really-much-too-long\" is too long to hold the private bus's socket (at most 94 bytes)",
                "sim.readySeconds: expected an integer from 1 to 600, found 0",
                "sim.speed: unknown field",
            ])
    }

    @Test(
        "the central's BlueZ fast paths are on by default and can be turned off one by one; the bus read interval is 500 µs unless set (0 to 100,000 µs)"
    )
    func bluezOptions() throws {
        let defaults = try AgentConfig.load(from: "\(fixtures)/valid-minimal.json")
        #expect(defaults.bluez.acquireNotify && defaults.bluez.acquireWrite)
        #expect(defaults.bluez.readInterval == .microseconds(500))
        let config = try AgentConfig.load(from: "\(fixtures)/bluez-options.json")
        #expect(!config.bluez.acquireNotify)
        #expect(config.bluez.acquireWrite)
        #expect(config.bluez.readInterval == .zero)
        #expect(
            issues("bad-bluez.json") == [
                "bluez.acquireNotify: expected true or false, found a string",
                "bluez.acquireWrite: expected true or false, found an integer",
                "bluez.readIntervalMicroseconds: expected an integer from 0 to 100000, found 100001",
                "bluez.startNotify: unknown field",
            ])
    }

    @Test("every bad user id is reported with its index")
    func badUids() {
        #expect(
            issues("bad-uids.json") == [
                "control.allowedUids[1]: expected a user id (an integer from 0 to 4294967294), found -1",
                "control.allowedUids[2]: expected a user id (an integer from 0 to 4294967294), found a string",
                "control.allowedUids[3]: expected a user id (an integer from 0 to 4294967294), found 4294967295",
            ])
    }

    @Test("control.group takes a group name from the group database or a numeric gid; bad ones are reported")
    func controlGroup() throws {
        func load(_ group: String) throws(ConfigError) -> AgentConfig {
            let text =
                #"{"version":1,"role":"central","control":{"group":"# + group
                + #"},"roles":{"central":{"plugin":"P"}}}"#
            return try AgentConfig(json: try! JSON(parsing: Array(text.utf8)), file: "/etc/bleagent/roles.json")
        }
        #expect(try load(#""root""#).control.group == 0)
        #expect(try load("4321").control.group == 4321)
        #expect(try AgentConfig.load(from: "\(fixtures)/valid-minimal.json").control.group == nil)
        for (group, message) in [
            (
                #""no-such-group-here""#,
                #"control.group: no group named "no-such-group-here" (getent group no-such-group-here)"#
            ),
            ("-1", "control.group: expected a group name or id (an integer from 0 to 4294967294), found -1"),
            ("[]", "control.group: expected a group name or id, found an array"),
            (#""""#, "control.group: expected a group name or id, found a string"),
        ] {
            #expect(throws: ConfigError.self) { try load(group) }
            do {
                _ = try load(group)
            } catch {
                #expect(error.issues.map(\.description) == [message])
            }
        }
    }

    @Test("an unsupported version, a numeric mode and plugin paths are rejected")
    func versionModeAndPluginNames() {
        #expect(
            issues("bad-modes.json") == [
                "version: 2 is not supported (this agent reads version 1)",
                "control.mode: expected a string of octal digits such as \"0600\", found an integer",
                "roles.central.plugin: \"../lib/evil\" is not a plugin name (a name, not a path)",
                "roles.peripheral.plugin: must not be empty",
            ])
    }

    @Test(
        "control.mode: accepted and rejected octal modes",
        arguments: [
            ("0600", nil), ("600", nil), ("0660", nil), ("0777", nil),
            ("999", "\"999\" is not an octal file mode (three or four digits 0-7, such as \"0600\")"),
            ("06000", "\"06000\" is not an octal file mode (three or four digits 0-7, such as \"0600\")"),
            ("4755", "\"4755\" sets special bits (setuid, setgid or sticky); use at most \"0777\""),
            ("0400", "\"0400\" does not let the owner read and write the socket; it must include 0600"),
        ] as [(String, String?)])
    func modes(mode: String, expected: String?) throws {
        let json: JSON = [
            "version": 1, "role": "central", "control": ["mode": .string(mode)],
            "roles": ["central": ["plugin": "P"]],
        ]
        do {
            let config = try AgentConfig(json: json, file: "/etc/bleagent/roles.json")
            #expect(expected == nil)
            #expect(config.control.mode & 0o600 == 0o600)
        } catch {
            #expect(error.issues.map(\.description) == [expected.map { "control.mode: \($0)" } ?? "(none)"])
        }
    }

    @Test("a file that is not JSON reports the line and column")
    func notJSON() {
        #expect(
            issues("not-json.json") == [
                "not valid JSON: line 3, column 21: unexpected ',' (json-c: quoted object property name expected)"
            ])
    }

    @Test("a top level that is not an object is reported")
    func notAnObject() {
        #expect(issues("not-an-object.json") == ["expected an object, found an array"])
    }

    @Test("a missing file is reported, not a crash")
    func missingFile() {
        #expect(issues("no-such-file.json").first?.hasPrefix("cannot read the file: open ") == true)
    }

    @Test("the error names the file on every line")
    func errorDescription() {
        let error = ConfigError(
            file: "roles.json",
            issues: [ConfigIssue(path: "roles.central.plugin", message: "expected a string, found an integer")])
        #expect(error.description == "roles.json: roles.central.plugin: expected a string, found an integer")
    }
}
