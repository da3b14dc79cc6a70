import AgentCore
import Glibc
import JSON
import Testing

@Suite("the fleet section of roles.json")
struct FleetConfigTests {
    static func config(_ fleet: String) throws(ConfigError) -> AgentConfig {
        let text = """
            {"version": 1, "role": "central", "roles": {"central": {"plugin": "X"}}, "fleet": \(fleet)}
            """
        let json = try! JSON(parsing: Array(text.utf8))
        return try AgentConfig(json: json, file: "/etc/bleagent/roles.json")
    }

    static func issues(_ fleet: String) -> [String] {
        do {
            _ = try config(fleet)
            return []
        } catch {
            return error.issues.map(\.description)
        }
    }

    @Test("defaults: the node id names the prefix and the client id; MQTT 5; QoS 1 for status and durable records")
    func defaults() throws {
        let fleet = try #require(try Self.config(#"{"broker": "mqtt://broker.example:1884", "node": "lane-7"}"#).fleet)
        #expect(fleet.broker == .tcp(host: "broker.example", port: 1884, tls: false))
        #expect(fleet.prefix == "bleagent/lane-7")
        #expect(fleet.clientID == "lane-7")
        #expect(fleet.protocolVersion == .v5)
        #expect(fleet.qos.status == 1 && fleet.qos.durable == 1 && fleet.qos.events == 0)
        #expect(fleet.allowsRPC("agent.status") && !fleet.allowsRPC("agent.shutdown") && !fleet.allowsRPC("pos.pay"))
        #expect(try Self.config(#"{"broker": "mqtts://h"}"#).fleet?.broker == .tcp(host: "h", port: 8883, tls: true))
        #expect(
            try Self.config(#"{"broker": "unix:run/mqtt.sock"}"#).fleet?.broker
                == .unix(path: "/etc/bleagent/run/mqtt.sock"))
        #expect(
            try Self.config(#"{"broker": "mqtt://[::1]:1883"}"#).fleet?.broker
                == .tcp(host: "::1", port: 1883, tls: false))
        #expect(try Self.config(#"{"broker": "unix:/s", "rpcAllow": ["pos.*"]}"#).fleet?.allowsRPC("pos.pay") == true)
    }

    @Test("every problem is reported with its field path")
    func errors() {
        let issues = Self.issues(
            #"""
            {"broker": "http://x", "node": "a/b", "prefix": "x/#", "keepaliveSeconds": 1, "qos": {"durable": 0},
             "events": {"kinds": ["nope"]}, "outbox": {"maxRecords": 1}, "rpcAllow": "all", "tls": {"cert": "c"},
             "colour": "red"}
            """#)
        let paths = Set(issues.map { String($0.prefix { $0 != ":" }) })
        for path in [
            "fleet.broker", "fleet.node", "fleet.prefix", "fleet.keepaliveSeconds", "fleet.qos.durable",
            "fleet.events.kinds", "fleet.outbox.maxRecords", "fleet.rpcAllow", "fleet.tls", "fleet.colour",
        ] {
            #expect(paths.contains(path), "\(path) missing from \(issues)")
        }
        #expect(Self.issues(#"{"node": "n"}"#) == ["fleet.broker: missing required field"])
        #expect(Self.issues(#"{"broker": "mqtt://user:pw@host:1883"}"#).count == 1)
    }

    @Test("the credentials file must not be readable by group or others")
    func credentialsMode() throws {
        let path = "/tmp/bleagent-credentials-\(getpid())"
        defer { unlink(path) }
        let fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0o644)
        _ = Array("node\nsecret\n".utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        chmod(path, 0o644)
        let refused = Self.issues(#"{"broker": "unix:/s", "credentials": "\#(path)"}"#)
        #expect(refused.count == 1 && refused[0].hasPrefix("fleet.credentials:") && refused[0].contains("0644"))
        chmod(path, 0o600)
        #expect(Self.issues(#"{"broker": "unix:/s", "credentials": "\#(path)"}"#).isEmpty)
        let credentials = try FleetCredentials.read(path)
        #expect(credentials == FleetCredentials(username: "node", password: "secret"))
        #expect(Self.issues(#"{"broker": "unix:/s", "credentials": "/nonexistent"}"#).count == 1)
    }
}
