import AgentCore
import ControlProtocol
import JSON
import RoleKit
import Testing

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

@Suite("line framing")
struct LineFramerTests {
    @Test("lines split on newline across arbitrary chunk boundaries; CR and empty lines dropped")
    func splitsLines() {
        var framer = LineFramer(maxLineBytes: 100)
        #expect(framer.append(bytes("{\"a\":1}\n{\"b\"")) == [.line(bytes("{\"a\":1}"))])
        #expect(framer.bufferedBytes == 4)
        #expect(framer.append(bytes(":2}\r\n\n\nx\n")) == [.line(bytes("{\"b\":2}")), .line(bytes("x"))])
        #expect(framer.bufferedBytes == 0)
    }

    @Test("a line of spaces and tabs is skipped like an empty line")
    func whitespaceLines() {
        var framer = LineFramer(maxLineBytes: 100)
        #expect(framer.append(bytes(" \t \r\n   \n\t\n{}\n")) == [.line(bytes("{}"))])
    }

    @Test("a line over the limit yields one oversized frame and framing resumes after its newline")
    func oversized() {
        var framer = LineFramer(maxLineBytes: 8)
        #expect(framer.append(bytes("12345678\n")) == [.line(bytes("12345678"))])
        #expect(framer.append(bytes("123456789")) == [.oversized])
        #expect(framer.append(bytes("more and more")) == [])
        #expect(framer.bufferedBytes == 0, "the discarded line is not kept")
        #expect(framer.append(bytes("tail\nok\n")) == [.line(bytes("ok"))])
    }
}

@Suite("JSON-RPC request decoding")
struct RequestDecoderTests {
    func decode(_ text: String) -> DecodedLine { RequestDecoder.decode(bytes(text)) }

    @Test("a request with params decodes to a call with its id")
    func request() {
        #expect(
            decode(#"{"jsonrpc":"2.0","id":7,"method":"agent.status","params":{"a":1}}"#)
                == .call(RPCCall(id: .number(7), method: "agent.status", params: ["a": 1])))
        #expect(
            decode(#"{"jsonrpc":"2.0","id":"x","method":"m.n","params":[1]}"#)
                == .call(RPCCall(id: .string("x"), method: "m.n", params: [1])))
    }

    @Test("a notification has no id")
    func notification() {
        #expect(
            decode(#"{"jsonrpc":"2.0","method":"agent.status"}"#)
                == .call(RPCCall(id: nil, method: "agent.status", params: nil)))
    }

    @Test("malformed JSON is a -32700 parse error with id null")
    func parseError() {
        guard case .reject(let id, let error) = decode("{nope") else {
            Issue.record("expected a rejection")
            return
        }
        #expect(id == .null)
        #expect(error.code == .parseError)
        #expect(error.message.hasPrefix("parse error: line 1, column 2:"))
    }

    @Test(
        "requests that are not request objects are -32600, keeping a readable id",
        arguments: [
            (
                #"[{"jsonrpc":"2.0","id":1,"method":"a.b"}]"#, RPCID.null,
                "batches are not supported: send one request per line"
            ),
            (#"[]"#, .null, "batches are not supported: send one request per line"),
            (#""text""#, .null, "a request must be a JSON object"),
            (#"{"jsonrpc":"2.0","id":1.5,"method":"a.b"}"#, .null, "\"id\" must be a string, an integer or null"),
            (#"{"jsonrpc":"1.0","id":3,"method":"a.b"}"#, .number(3), "\"jsonrpc\" must be \"2.0\""),
            (#"{"jsonrpc":"2.0","id":4,"method":5}"#, .number(4), "\"method\" must be a non-empty string"),
            (
                #"{"jsonrpc":"2.0","id":5,"method":"a.b","params":3}"#, .number(5),
                "\"params\" must be an object or an array"
            ),
        ])
    func invalidRequests(line: String, id: RPCID, message: String) {
        #expect(decode(line) == .reject(id: id, RPCError(.invalidRequest, message)))
    }
}

@Suite("client outbox")
struct ClientOutboxTests {
    func drain(_ outbox: inout ClientOutbox) -> [String] {
        var lines: [String] = []
        while let next = outbox.nextBytes {
            lines.append(String(decoding: next, as: UTF8.self))
            outbox.didWrite(next.count)
        }
        return lines
    }

    @Test("events over the cap drop the oldest and later events carry the running drop count")
    func dropsOldest() {
        var outbox = ClientOutbox(maxEvents: 3, maxReplyBytes: 1000)
        for _ in 1...5 { outbox.enqueueEvent { sequence, dropped in Array("e\(sequence)/d\(dropped)".utf8) } }
        #expect(outbox.eventCount == 3)
        #expect(outbox.droppedEvents == 2)
        #expect(drain(&outbox) == ["e3/d0", "e4/d1", "e5/d2"])
    }

    @Test("a partly written event is never dropped, and replies are never dropped")
    func keepsPartialAndReplies() {
        var outbox = ClientOutbox(maxEvents: 2, maxReplyBytes: 1000)
        outbox.enqueueEvent { s, _ in Array("event\(s)".utf8) }
        outbox.didWrite(2)  // "ev" is on the wire
        let accepted1 = outbox.enqueueReply(Array("reply".utf8))
        #expect(accepted1)
        outbox.enqueueEvent { s, _ in Array("event\(s)".utf8) }
        outbox.enqueueEvent { s, d in Array("event\(s)/\(d)".utf8) }
        #expect(drain(&outbox) == ["ent1", "reply", "event3/1"])
    }

    @Test("a written line is let go at once: the outbox holds only what waits to be written")
    func writtenLinesAreLetGo() {
        var outbox = ClientOutbox(maxEvents: 8, maxReplyBytes: 1 << 20)
        for index in 0..<3 {
            let accepted = outbox.enqueueReply(Array(repeating: UInt8(ascii: "a") + UInt8(index), count: 100_000))
            #expect(accepted)
        }
        outbox.enqueueEvent { _, _ in Array("event".utf8) }
        #expect(outbox.heldBytes == 300_005)
        outbox.didWrite(60_000)
        #expect(outbox.heldBytes == 300_005, "a line partly written is held whole")
        outbox.didWrite(40_000)
        #expect(outbox.heldBytes == 200_005)
        #expect(drain(&outbox).count == 3)
        #expect(outbox.heldBytes == 0)
        #expect(!outbox.hasPending)
    }

    @Test("replies past the byte cap are refused so the server can close the client")
    func replyCap() {
        var outbox = ClientOutbox(maxEvents: 2, maxReplyBytes: 10)
        let accepted2 = outbox.enqueueReply(Array("123456".utf8))
        #expect(accepted2)
        let accepted3 = outbox.enqueueReply(Array("123456".utf8))
        #expect(!accepted3)
        outbox.didWrite(6)
        let accepted4 = outbox.enqueueReply(Array("123456".utf8))
        #expect(accepted4)
    }
}

@Suite("method registry and peer policy")
struct RegistryTests {
    @Test("plugins may register only under their own, unreserved namespace")
    func namespaces() throws {
        let registry = MethodRegistry()
        let handler: MethodHandler = { _ in .null }
        try registry.register("scanner.journal", namespace: "scanner", params: .none, handler: handler)
        #expect(throws: RegistrationError.outsideNamespace(method: "other.x", namespace: "scanner")) {
            try registry.register("other.x", namespace: "scanner", params: .none, handler: handler)
        }
        #expect(throws: RegistrationError.reservedNamespace("agent")) {
            try registry.register("agent.evil", namespace: "agent", params: .none, handler: handler)
        }
        #expect(throws: RegistrationError.malformedName("scanner")) {
            try registry.register("scanner", namespace: "scanner", params: .none, handler: handler)
        }
        #expect(throws: RegistrationError.duplicate("scanner.journal")) {
            try registry.register("scanner.journal", namespace: "scanner", params: .none, handler: handler)
        }
        try registry.registerBuiltin("agent.status", params: .none, handler: handler)
        #expect(registry.methods == ["agent.status", "scanner.journal"])
        registry.unregisterNamespace("scanner")
        #expect(registry.methods == ["agent.status"])
    }

    @Test("an empty allowedUids admits only the agent's uid; a list admits exactly its uids")
    func policy() {
        #expect(PeerPolicy(allowedUids: [], ownUid: 1000).allows(uid: 1000))
        #expect(!PeerPolicy(allowedUids: [], ownUid: 1000).allows(uid: 0))
        #expect(PeerPolicy(allowedUids: [0, 2000], ownUid: 1000).allows(uid: 2000))
        #expect(!PeerPolicy(allowedUids: [2000], ownUid: 1000).allows(uid: 1000))
    }

    @Test("control.group admits a peer whose primary or supplementary groups hold it, whatever its uid")
    func peerPolicyGroup() {
        let policy = PeerPolicy(allowedUids: [], ownUid: 1000, operatorGroup: 120)
        #expect(policy.allows(uid: 1000, gid: 1000, groups: []))
        #expect(policy.allows(uid: 2000, gid: 120, groups: []))
        #expect(policy.allows(uid: 2000, gid: 2000, groups: [27, 120]))
        #expect(!policy.allows(uid: 2000, gid: 2000, groups: [27]))
        #expect(!PeerPolicy(allowedUids: [], ownUid: 1000).allows(uid: 2000, gid: 120, groups: [120]))
    }
}
