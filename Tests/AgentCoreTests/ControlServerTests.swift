import AgentCore
import BLETesting
import ControlProtocol
import Glibc
import IO
import JSON
import Testing

func errorCode(_ reply: JSON?) -> Int64? { reply?["error"]?["code"]?.intValue }

@Suite("control server over a real socket", .serialized)
struct ControlServerTests {
    @Test("the socket file has mode 0600 by default and the configured mode otherwise, and close removes it")
    func socketMode() async throws {
        let harness = try ServerHarness()
        var status = stat()
        #expect(stat(harness.socketPath, &status) == 0)
        #expect(status.st_mode & 0o7777 == 0o600)
        #expect(status.st_mode & S_IFMT == S_IFSOCK)
        let wide = try ServerHarness { $0.mode = 0o660 }
        #expect(stat(wide.socketPath, &status) == 0)
        #expect(status.st_mode & 0o7777 == 0o660)
        // close() runs on the loop; a request after it proves it ran.
        let client = try harness.client()
        harness.shutDown()
        #expect(await client.readLine() == nil, "the connection is closed")
        #expect(stat(harness.socketPath, &status) != 0, "the socket file is gone")
        wide.shutDown()
    }

    @Test("malformed JSON, non-requests, unknown methods and bad params get errors and the connection lives on")
    func badInputKeepsConnection() async throws {
        let harness = try ServerHarness()
        defer { harness.shutDown() }
        let client = try harness.client()
        await client.sendLine("{this is not json")
        #expect(await errorCode(client.readJSON()) == -32700)
        await client.sendLine("[1,2]")
        #expect(await errorCode(client.readJSON()) == -32600)
        await client.sendLine(#"{"jsonrpc":"2.0","id":9,"method":"nope.nothing"}"#)
        let unknown = await client.readJSON()
        #expect(errorCode(unknown) == -32601)
        #expect(unknown?["id"] == 9)
        await client.sendLine(#"{"jsonrpc":"2.0","id":10,"method":"events.subscribe","params":{"kinds":["weather"]}}"#)
        #expect(await errorCode(client.readJSON()) == -32602)
        let failed = await client.call("test.fail")
        #expect(failed?["error"] == ["code": -32011, "message": "no role", "data": ["why": "test"]])
        #expect(await client.call("test.crash")?["error"] == ["code": -32603, "message": "something broke"])
        #expect(await client.call("test.echo", ["hello": "world"])?["result"] == ["hello": "world"])
    }

    @Test("a client that sends requests but never reads the replies is disconnected; others stay served")
    func clientThatNeverReads() async throws {
        let harness = try ServerHarness { $0.maxQueuedReplyBytes = 256 * 1024 }
        defer { harness.shutDown() }
        // A raw socket that is never read while the requests go out.
        let greedy = try UnixSocket.connect(to: harness.socketPath)
        defer { greedy.close() }
        let polite = try harness.client()
        let request = RPCMessage.request(
            id: .number(1), method: "test.echo", params: [.string(String(repeating: "r", count: 64 * 1024))])
        let line = Array(request.serialized().utf8) + [UInt8(ascii: "\n")]
        // Blocking sends (on the blocking pool): they fail once the server has closed the connection.
        let sent = await BlockingPool.shared.run {
            var sent = 0
            sending: for _ in 0..<2_000 {
                var offset = 0
                while offset < line.count {
                    let written = line[offset...].withUnsafeBytes {
                        send(greedy.rawValue, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                    }
                    if written <= 0 { break sending }
                    offset += written
                }
                sent += 1
            }
            return sent
        }
        #expect(sent < 2_000, "the server closed the connection before every request was sent")
        var replies = 0
        while let chunk = await readWhenReady(greedy.rawValue), !chunk.isEmpty {
            replies += chunk.filter { $0 == UInt8(ascii: "\n") }.count
        }
        #expect(replies < sent, "the connection ended before every reply was written")
        #expect(await polite.call("test.echo", ["still"])?["result"] == ["still"])
    }

    @Test("a notification gets no reply")
    func notificationsGetNoReply() async throws {
        let harness = try ServerHarness()
        defer { harness.shutDown() }
        let client = try harness.client()
        await client.sendLine(#"{"jsonrpc":"2.0","method":"test.echo","params":[1]}"#)
        await client.sendLine(#"{"jsonrpc":"2.0","method":"no.such"}"#)
        await client.sendLine(#"{"jsonrpc":"2.0","id":"after","method":"test.echo","params":[2]}"#)
        #expect(await client.readJSON() == ["jsonrpc": "2.0", "id": "after", "result": [2]])
    }

    @Test("an oversized line is discarded with -32003 and the next line is served")
    func oversizedLine() async throws {
        let harness = try ServerHarness { $0.maxMessageBytes = 1024 }
        defer { harness.shutDown() }
        let client = try harness.client()
        await client.sendLine(
            #"{"jsonrpc":"2.0","id":1,"method":"test.echo","params":[""# + String(repeating: "x", count: 5000) + #""]}"#
        )
        let error = await client.readJSON()
        #expect(errorCode(error) == -32003)
        #expect(error?["id"] == .null)
        #expect(await client.call("test.echo", [3])?["result"] == [3])
    }

    @Test("connections beyond maxClients get -32001 and are closed; the others keep working")
    func tooManyClients() async throws {
        let harness = try ServerHarness { $0.maxClients = 2 }
        defer { harness.shutDown() }
        let first = try harness.client()
        let second = try harness.client()
        #expect(await first.call("test.echo", [1])?["result"] == [1])
        #expect(await second.call("test.echo", [2])?["result"] == [2])
        let third = try harness.client()
        #expect(await errorCode(third.readJSON()) == -32001)
        #expect(await third.readLine() == nil)
        #expect(await first.call("test.echo", [4])?["result"] == [4])
    }

    @Test("a peer whose uid is not in a non-empty allowedUids is refused with -32002, even the agent's own uid")
    func peerCredentialsChecked() async throws {
        let harness = try ServerHarness {
            $0.policy = PeerPolicy(allowedUids: [geteuid() == 65534 ? 65533 : 65534], ownUid: geteuid())
        }
        defer { harness.shutDown() }
        let refused = try harness.client()
        let error = await refused.readJSON()
        #expect(errorCode(error) == -32002)
        #expect(error?["error"]?["message"] == .string("uid \(geteuid()) is not allowed (control.allowedUids)"))
        #expect(await refused.readLine() == nil)
        harness.server.setPolicy(PeerPolicy(allowedUids: [], ownUid: geteuid()))
        #expect(try await harness.client().call("test.echo", [1])?["result"] == [1])
    }

    @Test("with control.group the socket file gets that group, and its members are admitted whatever their uid")
    func operatorGroup() async throws {
        let otherUid: UInt32 = geteuid() == 65534 ? 65533 : 65534
        let harness = try ServerHarness {
            $0.mode = 0o660
            $0.group = getegid()
            $0.policy = PeerPolicy(allowedUids: [otherUid], ownUid: geteuid(), operatorGroup: getegid())
        }
        defer { harness.shutDown() }
        var status = stat()
        #expect(stat(harness.socketPath, &status) == 0)
        #expect(status.st_gid == getegid() && status.st_mode & 0o7777 == 0o660)
        #expect(try await harness.client().call("test.echo", [1])?["result"] == [1], "admitted by its primary group")
        harness.server.setPolicy(PeerPolicy(allowedUids: [otherUid], ownUid: geteuid(), operatorGroup: getegid() &+ 1))
        let refused = try await harness.client().readJSON()
        #expect(errorCode(refused) == -32002)
        #expect(
            refused?["error"]?["message"]
                == .string("uid \(geteuid()) is not allowed (control.allowedUids, control.group)"))
        if geteuid() == 0 {
            // Root may give the socket any group; the file carries it before anyone can connect.
            let other = try ServerHarness { $0.group = 4321 }
            defer { other.shutDown() }
            #expect(stat(other.socketPath, &status) == 0 && status.st_gid == 4321)
        }
    }

    @Test("events reach subscribers of their kind only, as JSON-RPC notifications")
    func subscriptionFilter() async throws {
        let harness = try ServerHarness()
        defer { harness.shutDown() }
        let client = try harness.client()
        let other = try harness.client()
        #expect(await client.call("events.subscribe", ["kinds": ["state"]])?["result"] == ["kinds": ["state"]])
        harness.bus.publish(.value, ["v": 1])
        harness.bus.publish(.state, ["s": 2])
        #expect(
            await client.readJSON() == [
                "jsonrpc": "2.0", "method": "event",
                "params": ["kind": "state", "seq": 1, "dropped": 0, "data": ["s": 2]],
            ])
        #expect(await client.call("events.unsubscribe")?["result"] == ["dropped": 0])
        harness.bus.publish(.state, ["s": 3])
        #expect(await client.call("test.echo", [5])?["result"] == [5], "no event came before the reply")
        #expect(await other.call("test.echo", [6])?["result"] == [6], "the unsubscribed client got nothing")
    }

    @Test("a stalled client's queue stays bounded while events flood; others stay served; it sees the drop count")
    func stalledClient() async throws {
        let harness = try ServerHarness { $0.maxQueuedEvents = 16 }
        defer { harness.shutDown() }
        // Subscribed through a raw socket that nobody reads while the events flood.
        let raw = try UnixSocket.connect(to: harness.socketPath)
        try raw.writeAll(Array((#"{"jsonrpc":"2.0","id":1,"method":"events.subscribe"}"# + "\n").utf8))
        let subscribed = await readWhenReady(raw.rawValue).map { String(decoding: $0, as: UTF8.self) } ?? ""
        #expect(subscribed.contains(#""result""#), "\(subscribed)")
        let active = try harness.client()
        let payload = JSON.string(String(repeating: "p", count: 2048))
        let total: Int64 = 20_000  // about 40 MB of events: far beyond any socket buffer
        for index in 1...total {
            harness.bus.publish(.value, ["i": .int(index), "payload": payload])
            if index % 5000 == 0 {
                #expect(await active.call("test.echo", [.int(index)])?["result"] == [.int(index)])
            }
        }
        // The echo reply comes after every publish was handled by the loop.
        #expect(await active.call("test.echo", ["done"])?["result"] == ["done"])
        let stalled = try TestClient(adopting: raw)
        var received: Int64 = 0
        var last: JSON?
        while let event = await stalled.readJSON() {
            received += 1
            last = event
            if event["params"]?["seq"] == .int(total) { break }
        }
        let dropped = last?["params"]?["dropped"]?.intValue ?? -1
        #expect(last?["params"]?["data"]?["i"] == .int(total), "the newest event is kept")
        #expect(dropped > 0)
        #expect(received + dropped == total, "every event was delivered or counted as dropped")
        #expect(received < 2_000, "only the socket buffer and the bounded queue held events (got \(received))")
    }

    @Test("events published while the loop is busy wait in a bounded backlog; the client learns what was dropped")
    func eventBacklogIsBounded() async throws {
        // Each client's own queue could hold every event: only the backlog before it may drop.
        let harness = try ServerHarness { $0.maxQueuedEvents = 100_000 }
        defer { harness.shutDown() }
        let client = try harness.client()
        #expect(await client.call("events.subscribe", ["kinds": ["value"]])?["result"] != nil)
        // A job that holds the loop's thread until the test writes a byte: the job taking the backlog is
        // posted after it, so every event below is published while the loop is busy.
        let (release, releaser) = try FileDescriptor.pipe()
        defer {
            release.close()
            releaser.close()
        }
        harness.loop.execute {
            var byte: UInt8 = 0
            _ = withUnsafeMutableBytes(of: &byte) { try? release.read(into: $0) }
        }
        let total: Int64 = 5_000
        for index in 1...total { harness.bus.publish(.value, ["i": .int(index)]) }
        _ = try [UInt8](repeating: 1, count: 1).withUnsafeBytes { try releaser.write($0) }
        var received: Int64 = 0
        var first: JSON?
        var last: JSON?
        while let event = await client.readJSON() {
            received += 1
            first = first ?? event
            last = event
            if event["params"]?["seq"] == .int(total) { break }
        }
        let dropped = last?["params"]?["dropped"]?.intValue ?? -1
        #expect(last?["params"]?["data"]?["i"] == .int(total), "the newest event is kept")
        #expect(received <= 1_024, "the backlog held at most its capacity (got \(received))")
        #expect(received + dropped == total, "every event was delivered or counted as dropped")
        #expect(first?["params"]?["seq"] == .int(dropped + 1), "the drops are counted before the first event kept")
        #expect(await client.call("test.echo", ["after"])?["result"] == ["after"])
    }

    @Test("a live agent's socket is not taken over; a stale one is replaced; a non-socket is left alone")
    func socketTakeover() async throws {
        let harness = try ServerHarness()
        defer { harness.shutDown() }
        let loop = try EventLoop(name: "test-rival")
        let rival = ControlServer(
            options: ControlServerOptions(
                socketPath: harness.socketPath, policy: PeerPolicy(allowedUids: [], ownUid: 0)),
            loop: loop, registry: MethodRegistry(), bus: EventBus())
        #expect(throws: ControlServerError.self) { try rival.start() }
        #expect(try await harness.client().call("test.echo", [1])?["result"] == [1], "the first server still serves")

        // A stale socket: bound, never listening, its process gone.
        let stalePath = "\(harness.directory.path)/stale.sock"
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(stalePath.utf8)) }
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        close(fd)
        let replacement = ControlServer(
            options: ControlServerOptions(
                socketPath: stalePath, policy: PeerPolicy(allowedUids: [], ownUid: geteuid())),
            loop: loop, registry: MethodRegistry(), bus: EventBus())
        try replacement.start()
        replacement.close()

        let plainPath = "\(harness.directory.path)/plain-file"
        let file = open(plainPath, O_CREAT | O_WRONLY, 0o600)
        close(file)
        let clobber = ControlServer(
            options: ControlServerOptions(socketPath: plainPath, policy: PeerPolicy(allowedUids: [], ownUid: 0)),
            loop: loop, registry: MethodRegistry(), bus: EventBus())
        #expect(throws: ControlServerError.self) { try clobber.start() }
        var status = stat()
        #expect(stat(plainPath, &status) == 0 && status.st_mode & S_IFMT == S_IFREG)
    }
}
