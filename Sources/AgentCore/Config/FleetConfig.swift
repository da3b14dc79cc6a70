import ControlProtocol
import Glibc
import IO
import JSON

extension AgentConfig {
    /// The optional `fleet` section: the MQTT broker the agent joins and what
    /// it publishes there (docs/config.md, docs/fleet.md). Absent: the agent
    /// has no network side.
    public struct Fleet: Sendable, Hashable {
        /// Where the broker listens.
        public enum Broker: Sendable, Hashable, CustomStringConvertible {
            /// `mqtt://host:port` (plain TCP) or `mqtts://host:port` (TLS).
            case tcp(host: String, port: Int, tls: Bool)
            /// `unix:/path`: a Unix stream socket.
            case unix(path: String)

            /// The URL form.
            public var description: String {
                switch self {
                case .tcp(let host, let port, let tls): "\(tls ? "mqtts" : "mqtt")://\(host):\(port)"
                case .unix(let path): "unix:\(path)"
                }
            }

            /// Whether the connection is TLS.
            public var usesTLS: Bool {
                if case .tcp(_, _, true) = self { return true }
                return false
            }
        }

        /// The MQTT protocol version spoken.
        public enum ProtocolVersion: String, Sendable, Hashable, CaseIterable {
            /// MQTT 5: response topic and correlation data on RPC, reason codes on acknowledgements.
            case v5 = "5"
            /// MQTT 3.1.1: RPC requests name their reply topic in `replyTo`.
            case v311 = "3.1.1"
        }

        /// TLS files (absolute paths).
        public struct TLS: Sendable, Hashable {
            /// The CA certificate file the broker's certificate must chain to; nil: the system's CAs.
            public var caFile: String?
            /// The client certificate, for brokers that require one (with ``keyFile``).
            public var certificateFile: String?
            /// The client certificate's private key.
            public var keyFile: String?

            /// The defaults.
            public init() {}
        }

        /// The QoS of each stream (0, 1 or 2; durable records at least 1).
        public struct QoS: Sendable, Hashable {
            /// `<prefix>/status` and its Last Will.
            public var status = 1
            /// `<prefix>/events/<kind>`.
            public var events = 0
            /// Durable records (`<prefix>/payments`, ...): 1 or 2.
            public var durable = 1
            /// `<prefix>/sensors/<id>` and Home Assistant discovery.
            public var sensors = 0
            /// RPC replies and `<prefix>/config/result`.
            public var replies = 1

            /// The defaults.
            public init() {}
        }

        /// The event stream's settings.
        public struct Events: Sendable, Hashable {
            /// The kinds published (default: every kind).
            public var kinds: Set<EventKind> = Set(EventKind.allCases)
            /// Events waiting for the broker at most; older ones are dropped and counted.
            public var queueLimit = 1024
            /// `discovered` events are summarised at most once per this many seconds.
            public var discoverySeconds = 10

            /// The defaults.
            public init() {}
        }

        /// The durable outbox's bounds.
        public struct Outbox: Sendable, Hashable {
            /// Records waiting for the broker at most.
            public var maxRecords = 10_000
            /// Bytes of waiting records at most.
            public var maxBytes = 16 << 20

            /// The defaults.
            public init() {}
        }

        /// Home Assistant MQTT discovery.
        public struct HomeAssistant: Sendable, Hashable {
            /// Whether discovery configs are published.
            public var enabled = false
            /// Home Assistant's discovery prefix.
            public var discoveryPrefix = "homeassistant"
            /// Discovery topics with the node as a level of its own
            /// (`<prefix>/sensor/<node>/<id>/config`), which a broker ACL can
            /// confine to the node; otherwise `<prefix>/sensor/<node>_<id>/config`.
            public var nodeTopicLevel = false

            /// The defaults.
            public init() {}
        }

        /// The broker.
        public var broker: Broker
        /// The node id (default: the host name).
        public var node: String
        /// The MQTT client id (default: the node id).
        public var clientID: String
        /// The topic prefix (default `bleagent/<node>`).
        public var prefix: String
        /// The file holding the username (first line) and password (second line); nil: anonymous.
        public var credentialsFile: String?
        /// TLS files (used with `mqtts://`).
        public var tls: TLS
        /// The MQTT keepalive in seconds.
        public var keepaliveSeconds: Int
        /// The protocol version.
        public var protocolVersion: ProtocolVersion
        /// QoS per stream.
        public var qos: QoS
        /// The event stream.
        public var events: Events
        /// The control methods `<prefix>/rpc` may call: names, or `namespace.*`.
        public var rpcAllow: [String]
        /// Whether `<prefix>/config/set` is obeyed.
        public var acceptConfig: Bool
        /// Home Assistant discovery.
        public var homeAssistant: HomeAssistant
        /// The outbox's bounds.
        public var outbox: Outbox
        /// The status is published again at least this often (seconds).
        public var statusSeconds: Int

        /// The read-only methods RPC may call when `rpc.allow` is absent.
        public static let defaultRPCAllow = [
            "agent.status", "agent.methods", "fleet.status", "central.devices", "central.services",
            "peripheral.services", "peripheral.subscribers", "pos.terminals", "pos.transactions", "sensors.readings",
            "sensors.subscriptions", "sensors.ingest-stats", "gateway.devices", "gateway.device", "gateway.stats",
            "terminal.status", "diag.ping",
        ]

        /// Whether `method` is in ``rpcAllow``.
        public func allowsRPC(_ method: String) -> Bool {
            rpcAllow.contains { entry in
                entry.hasSuffix(".*") ? method.hasPrefix(entry.dropLast()) : entry == method
            }
        }
    }
}

extension AgentConfig {
    static func readFleet(_ top: inout ConfigReader, directory: String) -> Fleet?? {
        guard top.object["fleet"] != nil else { return .some(nil) }
        guard var reader = top.object("fleet") else { return nil }
        let broker = reader.nonEmptyString("broker", required: true).flatMap { url in
            FleetURL.parse(url, relativeTo: directory) { reader.issue("broker", $0) }
        }
        let node = readTopicLevel(&reader, "node") ?? FleetURL.hostName()
        let clientID = reader.nonEmptyString("clientId") ?? node
        if clientID.utf8.count > 65535 { reader.issue("clientId", "is longer than MQTT allows") }
        let prefix = reader.nonEmptyString("prefix") ?? "bleagent/\(node)"
        if let problem = FleetURL.topicProblem(prefix) { reader.issue("prefix", problem) }
        let credentials = reader.nonEmptyString("credentials").map { FilePath.absolute($0, relativeTo: directory) }
        if let credentials, let problem = FleetURL.secretFileProblem(credentials) {
            reader.issue("credentials", problem)
        }
        let tls = readTLS(&reader, directory: directory)
        let keepalive = reader.bounded("keepaliveSeconds", 5...3600) ?? 30
        let version: Fleet.ProtocolVersion = reader.choice("protocol") ?? .v5
        let qos = readQoS(&reader)
        let events = readEvents(&reader)
        let outbox = readOutbox(&reader)
        let (allow, acceptConfig) = readCommands(&reader)
        let homeAssistant = readHomeAssistant(&reader)
        let statusSeconds = reader.bounded("statusSeconds", 5...86400) ?? 60
        if let broker, !broker.usesTLS, tls != Fleet.TLS() {
            reader.issue("tls", "is set but the broker URL is not mqtts://")
        }
        reader.finish()
        top.absorb(reader)
        guard reader.issues.isEmpty, let broker, let tls, let qos, let events, let outbox, let homeAssistant else {
            return nil
        }
        return Fleet(
            broker: broker, node: node, clientID: clientID, prefix: prefix, credentialsFile: credentials, tls: tls,
            keepaliveSeconds: keepalive, protocolVersion: version, qos: qos, events: events, rpcAllow: allow,
            acceptConfig: acceptConfig, homeAssistant: homeAssistant, outbox: outbox, statusSeconds: statusSeconds)
    }

    private static func readTopicLevel(_ reader: inout ConfigReader, _ key: String) -> String? {
        guard let value = reader.nonEmptyString(key) else { return nil }
        guard FleetURL.isNodeID(value) else {
            reader.issue(key, "\"\(value)\" is not a node id (1-64 characters from A-Z a-z 0-9 _ - .)")
            return nil
        }
        return value
    }

    /// Reads the optional object `key` of `top` into `value` (its defaults
    /// when absent); nil when it has problems (they go to `top`).
    private static func section<T>(
        _ top: inout ConfigReader, _ key: String, _ value: T, _ read: (inout ConfigReader, inout T) -> Void
    ) -> T? {
        guard top.object[key] != nil else { return value }
        guard var reader = top.object(key) else { return nil }
        var value = value
        read(&reader, &value)
        reader.finish()
        top.absorb(reader)
        return reader.issues.isEmpty ? value : nil
    }

    private static func readTLS(_ top: inout ConfigReader, directory: String) -> Fleet.TLS? {
        section(&top, "tls", Fleet.TLS()) { reader, tls in
            tls.caFile = reader.nonEmptyString("ca").map { FilePath.absolute($0, relativeTo: directory) }
            tls.certificateFile = reader.nonEmptyString("cert").map { FilePath.absolute($0, relativeTo: directory) }
            tls.keyFile = reader.nonEmptyString("key").map { FilePath.absolute($0, relativeTo: directory) }
            if (tls.certificateFile == nil) != (tls.keyFile == nil) {
                reader.issue(nil, "\"cert\" and \"key\" go together")
            }
            if let key = tls.keyFile, let problem = FleetURL.secretFileProblem(key) { reader.issue("key", problem) }
        }
    }

    private static func readQoS(_ top: inout ConfigReader) -> Fleet.QoS? {
        section(&top, "qos", Fleet.QoS()) { reader, qos in
            qos.status = reader.bounded("status", 0...2) ?? qos.status
            qos.events = reader.bounded("events", 0...2) ?? qos.events
            qos.durable = reader.bounded("durable", 1...2) ?? qos.durable
            qos.sensors = reader.bounded("sensors", 0...2) ?? qos.sensors
            qos.replies = reader.bounded("replies", 0...2) ?? qos.replies
        }
    }

    private static func readEvents(_ top: inout ConfigReader) -> Fleet.Events? {
        section(&top, "events", Fleet.Events()) { reader, events in
            if let kinds = reader.value("kinds", required: false) {
                switch EventFilter.kinds(from: ["kinds": kinds]) {
                case .success(let parsed): events.kinds = parsed
                case .failure(let error): reader.issue("kinds", error.message)
                }
            }
            events.queueLimit = reader.bounded("queue", 1...100_000) ?? events.queueLimit
            events.discoverySeconds = reader.bounded("discoverySeconds", 1...3600) ?? events.discoverySeconds
        }
    }

    private static func readOutbox(_ top: inout ConfigReader) -> Fleet.Outbox? {
        section(&top, "outbox", Fleet.Outbox()) { reader, outbox in
            outbox.maxRecords = reader.bounded("maxRecords", 16...1_000_000) ?? outbox.maxRecords
            outbox.maxBytes = reader.bounded("maxBytes", 65536...(1 << 30)) ?? outbox.maxBytes
        }
    }

    private static func readCommands(_ top: inout ConfigReader) -> ([String], Bool) {
        var allow = Fleet.defaultRPCAllow
        if let value = top.value("rpcAllow", required: false) {
            if let array = value.arrayValue, array.allSatisfy({ $0.stringValue.map(isMethodPattern) ?? false }) {
                allow = array.compactMap(\.stringValue)
            } else {
                top.issue("rpcAllow", "expected an array of method names or \"namespace.*\" patterns")
            }
        }
        return (allow, top.bool("acceptConfig") ?? true)
    }

    private static func isMethodPattern(_ text: String) -> Bool {
        guard let namespace = ControlAPI.namespace(of: text), !text.hasSuffix(".") || text.hasSuffix(".*") else {
            return false
        }
        return !namespace.isEmpty && !text.contains(" ")
    }

    private static func readHomeAssistant(_ top: inout ConfigReader) -> Fleet.HomeAssistant? {
        section(&top, "homeAssistant", Fleet.HomeAssistant()) { reader, settings in
            settings.enabled = reader.bool("enabled") ?? settings.enabled
            settings.nodeTopicLevel = reader.bool("nodeTopicLevel") ?? settings.nodeTopicLevel
            if let prefix = reader.nonEmptyString("discoveryPrefix") {
                if let problem = FleetURL.topicProblem(prefix) {
                    reader.issue("discoveryPrefix", problem)
                } else {
                    settings.discoveryPrefix = prefix
                }
            }
        }
    }
}

extension ConfigReader {
    /// An integer within `range`, or nil (with an issue when present but wrong).
    mutating func bounded(_ key: String, _ range: ClosedRange<Int>) -> Int? {
        guard let value = int(key) else { return nil }
        guard value >= Int64(range.lowerBound), value <= Int64(range.upperBound) else {
            issue(key, "expected an integer from \(range.lowerBound) to \(range.upperBound), found \(value)")
            return nil
        }
        return Int(value)
    }
}

/// Parsing and checks for the fleet section's values.
enum FleetURL {
    /// `mqtt://host[:port]`, `mqtts://host[:port]` or `unix:/path` (relative paths resolve against `directory`).
    static func parse(_ url: String, relativeTo directory: String, issue: (String) -> Void) -> AgentConfig.Fleet.Broker?
    {
        if url.hasPrefix("unix:") {
            let path = String(url.dropFirst(5))
            guard !path.isEmpty else {
                issue("\"\(url)\" names no socket path")
                return nil
            }
            let absolute = FilePath.absolute(path, relativeTo: directory)
            guard absolute.utf8.count < 108 else {
                issue("\"\(absolute)\" is longer than a Unix socket path may be (107 bytes)")
                return nil
            }
            return .unix(path: absolute)
        }
        let tls: Bool
        let rest: Substring
        if url.hasPrefix("mqtt://") {
            (tls, rest) = (false, url.dropFirst(7))
        } else if url.hasPrefix("mqtts://") {
            (tls, rest) = (true, url.dropFirst(8))
        } else {
            issue("\"\(url)\" is not mqtt://host:port, mqtts://host:port or unix:/path")
            return nil
        }
        var host = rest
        var port = tls ? 8883 : 1883
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {  // [::1]:1883
            let after = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if after.hasPrefix(":") {
                guard let parsed = Int(after.dropFirst()), (1...65535).contains(parsed) else {
                    issue("\"\(url)\" has no valid port (1-65535)")
                    return nil
                }
                port = parsed
            } else if !after.isEmpty {
                issue("\"\(url)\" has text after the host")
                return nil
            }
        } else if let colon = host.lastIndex(of: ":") {
            guard let parsed = Int(host[host.index(after: colon)...]), (1...65535).contains(parsed) else {
                issue("\"\(url)\" has no valid port (1-65535)")
                return nil
            }
            port = parsed
            host = host[..<colon]
        }
        guard !host.isEmpty, !host.contains("/"), !host.contains("@"), !host.contains(" ") else {
            issue("\"\(url)\" has no valid host (credentials belong in \"credentials\", never in the URL)")
            return nil
        }
        return .tcp(host: String(host), port: port, tls: tls)
    }

    /// 1-64 characters from `A-Z a-z 0-9 _ - .`: a single topic level.
    static func isNodeID(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count)
            && text.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == 0x2D || byte == 0x5F || byte == 0x2E
            }
    }

    /// Why `topic` cannot be a topic prefix, or nil.
    static func topicProblem(_ topic: String) -> String? {
        if topic.contains("+") || topic.contains("#") { return "\"\(topic)\" contains a wildcard (+ or #)" }
        if topic.hasPrefix("$") { return "\"\(topic)\" starts with $ (reserved for the broker)" }
        if topic.split(separator: "/", omittingEmptySubsequences: false).contains(where: \.isEmpty) {
            return "\"\(topic)\" has an empty topic level"
        }
        if topic.contains("\0") || topic.utf8.count > 1024 { return "\"\(topic)\" is not a usable topic" }
        return nil
    }

    /// Why a file holding a secret may not be used (missing, not a regular
    /// file, readable by group or others, owned by another user), or nil.
    static func secretFileProblem(_ path: String) -> String? {
        var status = stat()
        guard stat(path, &status) == 0 else {
            return "cannot use \(path): \(String(cString: strerror(errno)))"
        }
        guard status.st_mode & S_IFMT == S_IFREG else { return "\(path) is not a regular file" }
        let mode = status.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            return "\(path) is readable by group or others (mode 0\(String(mode, radix: 8))); make it 0600 or 0400"
        }
        let owner = status.st_uid
        guard owner == geteuid() || owner == 0 else {
            return "\(path) is owned by uid \(owner), not by the agent's user (\(geteuid())) or root"
        }
        return nil
    }

    /// The host name (the default node id), made a valid node id.
    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "node" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let cleaned = String(name.prefix(64).map { isNodeID(String($0)) ? $0 : "-" })
        return cleaned.isEmpty ? "node" : cleaned
    }
}

/// The username and password of `fleet.credentials`: the file's first line
/// and second line. The file must be a regular file of the agent's user (or
/// root) that group and others cannot read.
public struct FleetCredentials: Sendable, Hashable {
    /// The MQTT username.
    public var username: String
    /// The MQTT password (may be empty).
    public var password: String

    /// Credentials.
    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }

    /// Reads and checks the file (blocking: call it where blocking is allowed).
    public static func read(_ path: String) throws(FleetFileError) -> FleetCredentials {
        if let problem = FleetURL.secretFileProblem(path) { throw FleetFileError(description: problem) }
        let bytes: [UInt8]
        do {
            bytes = try RegularFile.read(path, limit: 8192)
        } catch {
            throw FleetFileError(description: "cannot read \(path): \(error)")
        }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard let username = lines.first.map(String.init), !username.isEmpty else {
            throw FleetFileError(description: "\(path) has no username on its first line")
        }
        let password = lines.count > 1 ? String(lines[1]) : ""
        return FleetCredentials(username: username, password: password)
    }
}

/// A file the fleet section names cannot be used.
public struct FleetFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// One sentence.
    public let description: String

    /// An error saying `description`.
    public init(description: String) { self.description = description }
}
