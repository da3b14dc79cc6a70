import AgentCore
import BLETesting
import ControlProtocol
import Glibc
import IO
import JSON
import Testing

/// A gate handlers wait at until the test opens it.
final class HandlerGate: Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init() { (stream, continuation) = AsyncStream.makeStream(of: Void.self) }

    func open() { continuation.finish() }

    func wait() async { for await _ in stream {} }
}

@Suite("the control server bounds each client's work", .serialized, .timeLimit(.minutes(2)))
struct ControlLimitsTests {
    @Test(
        "past maxRequestsInFlight a client's socket is not read: its further lines wait in the socket until it fills, at most that many of its handlers run, other clients are served, and every request is answered once slots free"
    )
    func requestsPastTheCapWaitInTheSocket() async throws {
        let harness = try ServerHarness { $0.maxRequestsInFlight = 4 }
        defer { harness.shutDown() }
        let gate = HandlerGate()
        let handlers = Concurrency()
        try harness.registry.registerBuiltin("test.hold", params: .none) { _ in
            handlers.enter()
            await gate.wait()
            handlers.leave()
            return true
        }
        let raw = try UnixSocket.connect(to: harness.socketPath)
        try raw.setNonBlocking()
        var sent = 0
        var unfinished: [UInt8] = []
        sending: for id in 1...20_000 {
            let line = Array(
                (RPCMessage.request(id: .number(Int64(id)), method: "test.hold", params: nil).serialized() + "\n").utf8)
            var offset = 0
            while offset < line.count {
                let outcome = try line.withUnsafeBytes { try raw.send(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
                switch outcome {
                case .done(let count): offset += count
                case .wouldBlock:
                    unfinished = Array(line[offset...])
                    break sending
                }
            }
            sent += 1
        }
        #expect(!unfinished.isEmpty, "the socket filled up: the server stopped reading after \(sent) requests")
        await handlers.entries.wait(for: 4)
        let other = try harness.client()
        #expect(await other.call("test.echo", ["served"])?["result"] == ["served"], "another client is served")
        let counters = harness.server.counters
        #expect(counters.requestsInFlight == 4 && counters.pausedClients == 1, "\(counters)")
        #expect(handlers.peak == 4)

        gate.open()
        let client = try TestClient(adopting: raw)
        if !unfinished.isEmpty {
            #expect(await client.socket.send(bytes: unfinished))
            sent += 1
        }
        var answered = Set<Int64>()
        while answered.count < sent, let reply = await client.readJSON() {
            #expect(reply["result"] == true, "\(reply)")
            if let id = reply["id"]?.intValue { answered.insert(id) }
        }
        #expect(answered == Set((1...Int64(sent))), "every request sent was answered once")
        #expect(handlers.peak == 4, "never more than 4 handlers of the client at once")
    }

    @Test(
        "connections that leave a line unfinished are told (-32004) and closed after partialLineTimeout, freeing their slots; a quiet client with no unfinished line stays"
    )
    func unfinishedLinesTimeOut() async throws {
        let harness = try ServerHarness {
            $0.maxClients = 3
            $0.partialLineTimeout = .seconds(1)
        }
        defer { harness.shutDown() }
        let quiet = try harness.client()
        #expect(await quiet.call("test.echo", [1])?["result"] == [1])
        let stalled = [try harness.client(), try harness.client()]
        for client in stalled { await client.socket.send(bytes: Array(#"{"jsonrpc":"2.0","id":7,"meth"#.utf8)) }
        let refused = try harness.client()
        #expect(errorCode(await refused.readJSON()) == -32001, "three clients hold every slot")
        for client in stalled {
            let told = await client.readJSON()
            #expect(errorCode(told) == -32004, "\(String(describing: told))")
            #expect(await client.socket.waitForClose(), "the stalled connection is closed")
        }
        #expect(harness.server.counters.idleClosed == 2)
        let next = try harness.client()
        #expect(await next.call("test.echo", [2])?["result"] == [2], "a freed slot serves a new client")
        #expect(await quiet.call("test.echo", [3])?["result"] == [3], "a quiet client is not timed out")
    }

    @Test(
        "an immediate method answers on the loop while another client's handlers hold their slots, and the counters it reads follow clients that leave with handlers running and their socket paused"
    )
    func countersFollowClientsThatLeave() async throws {
        let harness = try ServerHarness { $0.maxRequestsInFlight = 2 }
        defer { harness.shutDown() }
        let gate = HandlerGate()
        let handlers = Concurrency()
        let finished = Recorder<Int>()
        try harness.registry.registerBuiltin("test.hold", params: .none) { _ in
            handlers.enter()
            await gate.wait()
            handlers.leave()
            finished.append(1)
            return true
        }
        let server = harness.server
        try harness.registry.registerImmediate("test.counters", params: .none) { _ in
            let counters = server.counters
            return [
                "clients": .int(Int64(counters.clients)), "inFlight": .int(Int64(counters.requestsInFlight)),
                "paused": .int(Int64(counters.pausedClients)),
            ]
        }
        let holder = try harness.client()
        let lines = (1...3).map {
            RPCMessage.request(id: .number(Int64($0)), method: "test.hold", params: nil).serialized()
        }
        await holder.sendLine(lines.joined(separator: "\n"))
        await handlers.entries.wait(for: 2)
        let observer = try harness.client()
        let held = await observer.call("test.counters")?["result"]
        #expect(held == ["clients": 2, "inFlight": 2, "paused": 1], "\(String(describing: held))")

        holder.socket.close()
        var after: JSON?
        for _ in 0..<10_000 {
            after = await observer.call("test.counters")?["result"]
            if after?["clients"] == 1 { break }
        }
        #expect(after == ["clients": 1, "inFlight": 0, "paused": 0], "\(String(describing: after))")

        gate.open()
        await finished.wait(for: 2)
        let settled = await observer.call("test.counters")?["result"]
        #expect(settled == ["clients": 1, "inFlight": 0, "paused": 0], "\(String(describing: settled))")
    }
}
