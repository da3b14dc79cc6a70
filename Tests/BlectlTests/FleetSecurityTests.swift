import BLETesting
import Glibc
import JSON
import Testing

/// TLS with a CA the test makes (openssl), credentials from a file, and
/// docs/fleet.md's mosquitto ACL keeping each node to its own prefix.
@Suite("fleet security: TLS, credentials, ACLs", .serialized)
struct FleetSecurityTests {
    /// Runs `command` with /bin/sh in `directory`; records its output when it fails.
    static func shell(_ command: String, in directory: String) async throws {
        let result = try await Child("/bin/sh", ["-c", "cd '\(directory)' && \(command)"]).finish()
        try #require(result.status == 0, "\(command): \(result.stderr)")
    }

    /// A CA (`ca.crt`), a server certificate for 127.0.0.1 signed by it
    /// (`server.crt`, `server.key`) and an unrelated CA (`other-ca.crt`).
    static func makeCertificates(in directory: String) async throws {
        let subject = "-subj /CN=bleagent-test-ca -days 2"
        try await shell(
            """
            openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt \(subject) 2>/dev/null && \
            openssl req -x509 -newkey rsa:2048 -nodes -keyout other-ca.key -out other-ca.crt -subj /CN=other -days 2 2>/dev/null && \
            openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=127.0.0.1 2>/dev/null && \
            printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > san.ext && \
            openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 2 \
              -extfile san.ext 2>/dev/null
            """, in: directory)
    }

    @Test(
        "over mqtts:// the agent checks the broker's certificate against the configured CA: it connects with the right CA and is refused (with the reason in fleet.status) with another"
    )
    func tls() async throws {
        let broker = try await MosquittoBroker(
            tcpListener: "cafile $DIR/ca.crt\ncertfile $DIR/server.crt\nkeyfile $DIR/server.key",
            prepare: { directory in try await Self.makeCertificates(in: directory) })
        let port = try #require(broker.port)
        let status = try await broker.subscriber(["bleagent/+/status"])

        func fleet(node: String, ca: String) -> String {
            #"""
            "fleet": { "broker": "mqtts://127.0.0.1:\#(port)", "node": "\#(node)", "tls": { "ca": "\#(broker.directory)/\#(ca)" } }
            """#
        }
        let trusted = try await RunningAgent(config: diagnosticsConfig(fleet: fleet(node: "tls-ok", ca: "ca.crt")))
        let online = try #require(
            await nextMessage(from: status, topic: "bleagent/tls-ok/status") { $0["state"] == "online" })
        #expect(online["agent"]?["fleet"]?["broker"]?.stringValue == "mqtts://127.0.0.1:\(port)")
        #expect(broker.log.contains("tls-ok"), "the broker saw the TLS client")

        let untrusted = try await RunningAgent(
            config: diagnosticsConfig(fleet: fleet(node: "tls-bad", ca: "other-ca.crt")))
        let refused = try await waitForFleetStatus(socket: ["--socket", untrusted.socketPath], "a TLS failure") {
            $0["lastError"] != .null && $0["connected"] == false
        }
        #expect(refused["connections"] == 0, "\(refused)")
        withExtendedLifetime(trusted) {}
        await terminate(status)
    }

    /// Users and docs/fleet.md's ACL: each node reads and writes only `bleagent/<its user>/#`.
    static func prepareUsers(_ directory: String) async throws {
        try await shell(
            """
            \(MosquittoTools.passwords) -c -b passwd lane-1 secret-1 && \
            \(MosquittoTools.passwords) -b passwd lane-2 secret-2 && \
            \(MosquittoTools.passwords) -b passwd admin admin-secret && \
            printf 'user admin\\ntopic readwrite #\\n\\npattern readwrite bleagent/%%u/#\\n' > acl
            """, in: directory)
    }

    static func credentialsFile(_ directory: String, _ user: String, _ password: String, mode: mode_t = 0o600) -> String
    {
        let path = "\(directory)/\(user).credentials"
        writeFile(path, "\(user)\n\(password)\n")
        chmod(path, mode)
        return path
    }

    @Test(
        "credentials come from a file the agent refuses when others can read it; with the docs' ACL a node publishes under its own prefix and is refused outside it; a wrong password is refused at connect"
    )
    func credentialsAndACL() async throws {
        let broker = try await MosquittoBroker(
            extra: "allow_anonymous false\npassword_file $DIR/passwd\nacl_file $DIR/acl",
            prepare: { directory in try await Self.prepareUsers(directory) })
        let admin = ["-u", "admin", "-P", "admin-secret"]
        let status = try await broker.subscriber(["bleagent/+/status"], extra: admin)
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }

        // A credentials file others can read is a config error, with its field path.
        let loose = Self.credentialsFile(directory, "lane-1", "secret-1", mode: 0o644)
        let looseConfig = "\(directory)/loose.json"
        writeFile(
            looseConfig,
            diagnosticsConfig(
                fleet: #""fleet": { "broker": "\#(broker.url)", "node": "lane-1", "credentials": "\#(loose)" }"#))
        let check = try await Child("\(buildDirectory)/bleagent", ["--check-config", "--config", looseConfig]).finish()
        #expect(check.status == 78)
        #expect(check.stderr.contains("fleet.credentials: \(loose) is readable by group or others"), "\(check.stderr)")

        let good = Self.credentialsFile(directory, "lane-1", "secret-1")
        let own = try await RunningAgent(
            config: diagnosticsConfig(
                fleet: #""fleet": { "broker": "\#(broker.url)", "node": "lane-1", "credentials": "\#(good)" }"#))
        _ = try #require(await nextMessage(from: status, topic: "bleagent/lane-1/status") { $0["state"] == "online" })
        #expect(
            try JSON(parsing: try await blectl(["--socket", own.socketPath, "--json", "fleet", "status"]).stdout)[
                "refusedPublishes"] == 0)

        // The same user claiming another node's prefix: the broker refuses its publishes and subscriptions.
        let intruder = try await RunningAgent(
            config: diagnosticsConfig(
                fleet:
                    #""fleet": { "broker": "\#(broker.url)", "node": "lane-2", "clientId": "lane-1-as-2", "credentials": "\#(good)" }"#
            ))
        let refused = try await waitForFleetStatus(socket: ["--socket", intruder.socketPath], "refused publishes") {
            $0["connected"] == true && ($0["refusedPublishes"]?.intValue ?? 0) > 0
        }
        #expect(refused["lastError"]?.stringValue?.contains("Not authorized") == true, "\(refused)")
        #expect(broker.log.contains("Denied PUBLISH from lane-1-as-2"), "the broker's log shows the denial")

        let wrong = Self.credentialsFile(directory, "lane-2", "not-the-password")
        let locked = try await RunningAgent(
            config: diagnosticsConfig(
                fleet: #""fleet": { "broker": "\#(broker.url)", "node": "lane-2", "credentials": "\#(wrong)" }"#))
        let denied = try await waitForFleetStatus(socket: ["--socket", locked.socketPath], "a refused connection") {
            ($0["lastError"]?.stringValue ?? "").contains("refused the connection")
        }
        #expect(denied["connections"] == 0)
        withExtendedLifetime(own) {}
        await terminate(status)
    }
}
