import IO
import JSON

/// The agent's configuration (roles.json), validated. Every field and its
/// default is documented in docs/config.md; read one with
/// ``load(from:currentDirectory:)``.
public struct AgentConfig: Sendable, Hashable {
    /// The BLE role the agent runs.
    public enum Role: String, Sendable, Hashable, CaseIterable {
        /// Scans, connects and talks to peripherals (GATT client).
        case central
        /// Advertises and serves a GATT database (GATT server).
        case peripheral
    }

    /// Where BLE traffic goes.
    public enum Backend: String, Sendable, Hashable, CaseIterable {
        /// The system's bluetoothd over the system D-Bus.
        case bluez
        /// The embedded simulator (blesim), same D-Bus API.
        case sim
    }

    /// State restoration settings.
    public struct Restore: Sendable, Hashable {
        /// The name restored state is kept under.
        public var identifier: String
        /// The absolute directory restored state is written to.
        public var stateDirectory: String

        /// Restore settings.
        public init(identifier: String, stateDirectory: String) {
            self.identifier = identifier
            self.stateDirectory = stateDirectory
        }
    }

    /// The control socket's settings.
    public struct Control: Sendable, Hashable {
        /// The absolute path of the Unix socket.
        public var socketPath: String
        /// The socket file's permission bits (default 0o600).
        public var mode: UInt32
        /// The uids that may connect. Empty: only the agent's own uid. Not
        /// empty: exactly these (list the agent's own uid to keep it).
        public var allowedUids: [UInt32]
        /// The socket file's group, whose members may connect as well
        /// (`control.group`, resolved to a gid); nil: the agent's own group
        /// and no members admitted by group.
        public var group: UInt32?
    }

    /// One role's plugin and its opaque config.
    public struct RoleSettings: Sendable, Hashable {
        /// The plugin's name (not a path): `lib<plugin>.so` in the plugin directory.
        public var plugin: String
        /// The plugin's own config, handed to it unread (an empty object if absent).
        public var config: JSON

        /// Role settings.
        public init(plugin: String, config: JSON) {
            self.plugin = plugin
            self.config = config
        }
    }

    /// How the central uses BlueZ's GATT client (both backends): its fast
    /// paths, which it leaves for the plain calls when BlueZ refuses them.
    public struct BlueZ: Sendable, Hashable {
        /// Notifications through AcquireNotify sockets (default); false:
        /// StartNotify only (each value a PropertiesChanged signal).
        public var acquireNotify = true
        /// Writes without response through AcquireWrite sockets (default);
        /// false: WriteValue with `type: "command"` only.
        public var acquireWrite = true
        /// The shortest time between two reads of the bus connection while
        /// only signals arrive (a flood of advertisement reports is then read
        /// in runs, not one wake-up per message); `.zero` reads at once.
        /// Replies are never held back (`DBusConnection`'s `readInterval`).
        public var readInterval: Duration = .microseconds(500)

        /// The most ``readInterval`` may be, in microseconds (100 ms).
        public static let maximumReadIntervalMicroseconds: Int64 = 100_000

        /// The defaults.
        public init() {}
    }

    /// The embedded simulator's settings (used with ``Backend/sim``).
    public struct Sim: Sendable, Hashable {
        /// The blesim executable; nil: `blesim` next to the running bleagent.
        public var binary: String?
        /// The absolute path of the scenario blesim serves.
        public var scenario: String
        /// The dbus-daemon executable for the private bus.
        public var dbusDaemon: String
        /// The absolute directory for the private bus's config and socket.
        public var runtimeDirectory: String
        /// How long the bus and blesim each have to report ready.
        public var readyDeadline: Duration

        /// Sim settings.
        public init(
            binary: String?, scenario: String, dbusDaemon: String, runtimeDirectory: String, readyDeadline: Duration
        ) {
            self.binary = binary
            self.scenario = scenario
            self.dbusDaemon = dbusDaemon
            self.runtimeDirectory = runtimeDirectory
            self.readyDeadline = readyDeadline
        }
    }

    /// The absolute path of the file this config was read from.
    public var file: String
    /// The config format version (always 1 today).
    public var version: Int64
    /// The role to run.
    public var role: Role
    /// The BLE backend.
    public var backend: Backend
    /// The adapter name, such as `hci0`.
    public var adapter: String
    /// State restoration settings.
    public var restore: Restore
    /// Control socket settings.
    public var control: Control
    /// The absolute directory plugins are loaded from.
    public var pluginDirectory: String
    /// The embedded simulator's settings (read whatever the backend).
    public var sim: Sim
    /// How the central uses BlueZ's GATT client.
    public var bluez: BlueZ
    /// The settings of each configured role; always holds ``role``.
    public var roles: [Role: RoleSettings]
    /// The MQTT fleet settings; nil when the config has no `fleet` section.
    public var fleet: Fleet?

    /// The settings of the role to run.
    public var selectedRole: RoleSettings? { roles[role] }

    /// The config format version this build reads.
    public static let supportedVersion: Int64 = 1
}

extension AgentConfig {
    /// Reads, parses and validates the config at `path`. Relative paths in
    /// it resolve against the file's directory; a relative `path` resolves
    /// against `currentDirectory` (default: the process's).
    public static func load(from path: String, currentDirectory: String? = nil) throws(ConfigError) -> AgentConfig {
        let absolute = FilePath.absolute(path, relativeTo: currentDirectory ?? FilePath.currentDirectory())
        return try parse(
            Result { () throws(SystemError) in try RegularFile.read(absolute, limit: maximumBytes) },
            file: absolute, reportedAs: path)
    }

    /// ``load(from:currentDirectory:)`` with the file read on the blocking pool (a reload: a slow disk holds
    /// nothing but this reload; a FIFO or a device at the path is refused before anything waits on it).
    public static func read(from path: String) async -> Result<AgentConfig, ConfigError> {
        let absolute = FilePath.absolute(path, relativeTo: FilePath.currentDirectory())
        let bytes = await BlockingPool.shared.run { () -> Result<[UInt8], SystemError> in
            Result { () throws(SystemError) in try RegularFile.read(absolute, limit: maximumBytes) }
        }
        return Result { () throws(ConfigError) in try parse(bytes, file: absolute, reportedAs: path) }
    }

    /// The largest config file read.
    static let maximumBytes = 1 << 20

    private static func parse(
        _ read: Result<[UInt8], SystemError>, file absolute: String, reportedAs path: String
    ) throws(ConfigError) -> AgentConfig {
        let bytes: [UInt8]
        do {
            bytes = try read.get()
        } catch {
            throw ConfigError(file: path, issues: [ConfigIssue(path: "", message: "cannot read the file: \(error)")])
        }
        let json: JSON
        do {
            json = try JSON(parsing: bytes)
        } catch {
            throw ConfigError(file: path, issues: [ConfigIssue(path: "", message: "not valid JSON: \(error)")])
        }
        return try AgentConfig(json: json, file: absolute, reportedAs: path)
    }

    /// Validates parsed JSON; `file` is the absolute path relative paths
    /// resolve against, `reportedAs` names it in errors.
    public init(json: JSON, file: String, reportedAs: String? = nil) throws(ConfigError) {
        var issues: [ConfigIssue] = []
        let directory = FilePath.directory(of: file)
        guard var top = ConfigReader.object(json, at: "", issues: &issues) else {
            throw ConfigError(file: reportedAs ?? file, issues: issues)
        }
        let version = top.int("version", required: true)
        if let version, version != Self.supportedVersion {
            top.issue("version", "\(version) is not supported (this agent reads version \(Self.supportedVersion))")
        }
        let role: Role? = top.choice("role", required: true)
        let backend: Backend = top.choice("backend") ?? .bluez
        let adapter = Self.readAdapter(&top)
        let restore = Self.readRestore(&top, directory: directory)
        let control = Self.readControl(&top, directory: directory)
        let pluginDirectory = top.nonEmptyString("pluginDirectory").map { FilePath.absolute($0, relativeTo: directory) }
        let roles = Self.readRoles(&top, selected: role)
        let sim = Self.readSim(&top, directory: directory, control: control)
        let bluez = Self.readBlueZ(&top)
        let fleet = Self.readFleet(&top, directory: directory)
        top.finish()
        issues += top.issues
        guard issues.isEmpty, let version, let role, let restore, let control, let roles, let sim, let bluez, let fleet
        else {
            throw ConfigError(file: reportedAs ?? file, issues: issues)
        }
        self.file = file
        self.version = version
        self.role = role
        self.backend = backend
        self.adapter = adapter ?? "hci0"
        self.restore = restore
        self.control = control
        self.pluginDirectory = pluginDirectory ?? "/usr/lib/bleagent/plugins"
        self.roles = roles
        self.sim = sim
        self.bluez = bluez
        self.fleet = fleet
    }

    private static func readBlueZ(_ top: inout ConfigReader) -> BlueZ? {
        var bluez = BlueZ()
        guard top.object["bluez"] != nil else { return bluez }
        guard var reader = top.object("bluez") else { return nil }
        if let value = reader.bool("acquireNotify") { bluez.acquireNotify = value }
        if let value = reader.bool("acquireWrite") { bluez.acquireWrite = value }
        if let value = reader.int("readIntervalMicroseconds") {
            let maximum = BlueZ.maximumReadIntervalMicroseconds
            if (0...maximum).contains(value) {
                bluez.readInterval = .microseconds(value)
            } else {
                reader.issue("readIntervalMicroseconds", "expected an integer from 0 to \(maximum), found \(value)")
            }
        }
        reader.finish()
        top.absorb(reader)
        return reader.issues.isEmpty ? bluez : nil
    }

    private static func readSim(_ top: inout ConfigReader, directory: String, control: Control?) -> Sim? {
        let socketDirectory = FilePath.directory(of: control?.socketPath ?? "/run/bleagent/control.sock")
        var sim = Sim(
            binary: nil, scenario: FilePath.absolute("sim/scenarios/default.json", relativeTo: directory),
            dbusDaemon: "/usr/bin/dbus-daemon", runtimeDirectory: "\(socketDirectory)/sim", readyDeadline: .seconds(10))
        guard top.object["sim"] != nil else { return sim }
        guard var reader = top.object("sim") else { return nil }
        if let binary = reader.nonEmptyString("binary") {
            sim.binary = FilePath.absolute(binary, relativeTo: directory)
        }
        if let scenario = reader.nonEmptyString("scenario") {
            sim.scenario = FilePath.absolute(scenario, relativeTo: directory)
        }
        if let daemon = reader.nonEmptyString("dbusDaemon") {
            sim.dbusDaemon = FilePath.absolute(daemon, relativeTo: directory)
        }
        if let runtime = reader.nonEmptyString("runtimeDirectory") {
            let absolute = FilePath.absolute(runtime, relativeTo: directory)
            if absolute.utf8.count + "/sim-bus.sock".utf8.count >= 108 {
                reader.issue(
                    "runtimeDirectory",
                    "\"\(absolute)\" is too long to hold the private bus's socket (at most 94 bytes)")
            } else {
                sim.runtimeDirectory = absolute
            }
        }
        if let seconds = reader.int("readySeconds") {
            if (1...600).contains(seconds) {
                sim.readyDeadline = .seconds(seconds)
            } else {
                reader.issue("readySeconds", "expected an integer from 1 to 600, found \(seconds)")
            }
        }
        reader.finish()
        top.absorb(reader)
        return reader.issues.isEmpty ? sim : nil
    }

    private static func readAdapter(_ top: inout ConfigReader) -> String? {
        guard let adapter = top.nonEmptyString("adapter") else { return nil }
        guard !adapter.contains("/"), adapter.utf8.count <= 64 else {
            top.issue("adapter", "\"\(adapter)\" is not an adapter name such as \"hci0\"")
            return nil
        }
        return adapter
    }

    private static func readRestore(_ top: inout ConfigReader, directory: String) -> Restore? {
        var restore = Restore(identifier: "bleagent", stateDirectory: "/var/lib/bleagent")
        guard top.object["restore"] != nil else { return restore }
        guard var reader = top.object("restore") else { return nil }
        if let identifier = reader.nonEmptyString("identifier") { restore.identifier = identifier }
        if let directoryPath = reader.nonEmptyString("stateDirectory") {
            restore.stateDirectory = FilePath.absolute(directoryPath, relativeTo: directory)
        }
        reader.finish()
        top.absorb(reader)
        return reader.issues.isEmpty ? restore : nil
    }

    private static func readControl(_ top: inout ConfigReader, directory: String) -> Control? {
        var control = Control(socketPath: "/run/bleagent/control.sock", mode: 0o600, allowedUids: [], group: nil)
        guard top.object["control"] != nil else { return control }
        guard var reader = top.object("control") else { return nil }
        if let socket = reader.nonEmptyString("socket") {
            let absolute = FilePath.absolute(socket, relativeTo: directory)
            if absolute.utf8.count >= 108 {
                reader.issue("socket", "\"\(absolute)\" is longer than a Unix socket path may be (107 bytes)")
            } else {
                control.socketPath = absolute
            }
        }
        if let modeValue = reader.value("mode", required: false) {
            if let mode = FileMode.parse(modeValue, issue: { reader.issue("mode", $0) }) { control.mode = mode }
        }
        if let uidsValue = reader.value("allowedUids", required: false) {
            control.allowedUids = readUids(uidsValue, at: reader.path(of: "allowedUids"), into: &reader)
        }
        if let groupValue = reader.value("group", required: false) {
            control.group = readGroup(groupValue, into: &reader)
        }
        reader.finish()
        top.absorb(reader)
        return reader.issues.isEmpty ? control : nil
    }

    private static func readUids(_ json: JSON, at path: String, into reader: inout ConfigReader) -> [UInt32] {
        guard let array = json.arrayValue else {
            reader.issue("allowedUids", "expected an array of user ids, found \(kindName(of: json))")
            return []
        }
        var uids: [UInt32] = []
        for (index, element) in array.enumerated() {
            if let uid = element.intValue, uid >= 0, uid < Int64(UInt32.max) {
                uids.append(UInt32(uid))
            } else {
                let found = element.intValue.map { "\($0)" } ?? kindName(of: element)
                reader.issue(
                    at: "\(path)[\(index)]", "expected a user id (an integer from 0 to 4294967294), found \(found)")
            }
        }
        return uids
    }

    /// `control.group`: a group name (looked up in the system's group
    /// database) or a numeric gid.
    private static func readGroup(_ json: JSON, into reader: inout ConfigReader) -> UInt32? {
        if let gid = json.intValue {
            guard gid >= 0, gid < Int64(UInt32.max) else {
                reader.issue("group", "expected a group name or id (an integer from 0 to 4294967294), found \(gid)")
                return nil
            }
            return UInt32(gid)
        }
        guard let name = json.stringValue, !name.isEmpty else {
            reader.issue("group", "expected a group name or id, found \(kindName(of: json))")
            return nil
        }
        guard let gid = GroupDatabase.gid(named: name) else {
            reader.issue("group", "no group named \"\(name)\" (getent group \(name))")
            return nil
        }
        return gid
    }

    private static func readRoles(_ top: inout ConfigReader, selected: Role?) -> [Role: RoleSettings]? {
        guard var reader = top.object("roles", required: true) else { return nil }
        var roles: [Role: RoleSettings] = [:]
        for role in Role.allCases {
            let required = role == selected
            guard var settings = reader.object(role.rawValue, required: required) else { continue }
            let plugin = settings.nonEmptyString("plugin", required: true)
            if let plugin, plugin.contains("/") || plugin.contains("\0") || plugin.hasPrefix(".") {
                settings.issue("plugin", "\"\(plugin)\" is not a plugin name (a name, not a path)")
            }
            let config = settings.value("config", required: false) ?? .object(JSONObject())
            if config.objectValue == nil {
                settings.issue("config", "expected an object, found \(kindName(of: config))")
            }
            settings.finish()
            reader.absorb(settings)
            if settings.issues.isEmpty, let plugin { roles[role] = RoleSettings(plugin: plugin, config: config) }
        }
        reader.finish()
        top.absorb(reader)
        return reader.issues.isEmpty ? roles : nil
    }
}
