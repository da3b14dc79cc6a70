import BLETesting
import DBus
import Synchronization
import Testing

@Suite("Signals as streams")
struct SignalTests {
    static let interface = "org.bleagent.Signals"

    static func emit(_ connection: DBusConnection, _ member: String, _ value: Int32) throws {
        try connection.emitSignal(path: Fixture.path, interface: interface, member: member, arguments: [.int32(value)])
    }

    @Test("signals reach a stream in the order they were emitted, with their sender and body")
    func ordered() async throws {
        try await PrivateBus.with { bus in
            let emitter = try await bus.connect()
            let receiver = try await bus.connect()
            let stream = try await receiver.signals(MatchRule(interface: SignalTests.interface, member: "Tick"))
            for value in 0..<500 { try SignalTests.emit(emitter, "Tick", Int32(value)) }
            var received: [Int32] = []
            for await signal in stream {
                #expect(signal.sender == emitter.uniqueName && signal.path == Fixture.path)
                received.append(try signal.decode(Int32.self))
                if received.count == 500 { break }
            }
            #expect(received == Array(0..<500))
            await emitter.close()
            await receiver.close()
        }
    }

    @Test("whenWritten runs once what was queued before it is written, in order; on a closed connection at once")
    func whenWrittenFollowsTheQueue() async throws {
        try await PrivateBus.with { bus in
            let emitter = try await bus.connect()
            let receiver = try await bus.connect()
            let stream = try await receiver.signals(MatchRule(interface: SignalTests.interface))
            let order = Mutex<[Int]>([])
            let written = AsyncStream.makeStream(of: Int.self)
            for value in 1...3 {
                try SignalTests.emit(emitter, "Tick", Int32(value))
                emitter.whenWritten {
                    order.withLock { $0.append(value) }
                    written.continuation.yield(value)
                }
            }
            var heard = written.stream.makeAsyncIterator()
            for _ in 1...3 { _ = await heard.next() }
            #expect(order.withLock { $0 } == [1, 2, 3])
            var signals = stream.makeAsyncIterator()
            for value in 1...3 { #expect(try await signals.next()?.decode(Int32.self) == Int32(value)) }
            await emitter.close()
            let ranAtOnce = Mutex(false)
            emitter.whenWritten { ranAtOnce.withLock { $0 = true } }
            #expect(ranAtOnce.withLock { $0 })
            await receiver.close()
        }
    }

    @Test("overlapping subscriptions each get exactly the signals their own rule matches")
    func overlapping() async throws {
        try await PrivateBus.with { bus in
            let emitter = try await bus.connect()
            let receiver = try await bus.connect()
            let ticks = try await receiver.signals(MatchRule(interface: SignalTests.interface, member: "Tick"))
            let all = try await receiver.signals(MatchRule(interface: SignalTests.interface))
            try SignalTests.emit(emitter, "Tock", 1)
            try SignalTests.emit(emitter, "Tick", 2)
            try SignalTests.emit(emitter, "Done", 3)
            var allMembers: [String] = []
            for await signal in all {
                allMembers.append(signal.member ?? "")
                if signal.member == "Done" { break }
            }
            #expect(allMembers == ["Tock", "Tick", "Done"])
            var iterator = ticks.makeAsyncIterator()
            #expect(try await iterator.next()?.decode(Int32.self) == Int32(2))
            ticks.finish()
            #expect(await iterator.next() == nil)
            await emitter.close()
            await receiver.close()
        }
    }

    @Test("the match rule is removed from the bus when a stream is finished, cancelled or dropped")
    func removeMatch() async throws {
        try await PrivateBus.with { bus in
            let receiver = try await bus.connect()
            let name = try #require(receiver.uniqueName)
            // A round trip on the same connection orders after an earlier no-reply RemoveMatch.
            func rules() async throws -> UInt32 { try await bus.matchRuleCount(of: name, using: receiver) }
            let baseline = try await rules()

            let finished = try await receiver.signals(MatchRule(interface: SignalTests.interface))
            #expect(try await rules() == baseline + 1)
            finished.finish()
            #expect(try await rules() == baseline)

            let consumed = try await receiver.signals(MatchRule(interface: SignalTests.interface))
            #expect(try await rules() == baseline + 1)
            let consumer = Task { for await _ in consumed {} }
            consumer.cancel()
            await consumer.value
            #expect(try await rules() == baseline)

            do {
                let dropped = try await receiver.signals(MatchRule(interface: SignalTests.interface))
                _ = dropped
                #expect(try await rules() == baseline + 1)
            }
            #expect(try await rules() == baseline)
            await receiver.close()
        }
    }

    @Test("a rule naming a well-known sender matches only that name's current owner")
    func wellKnownSender() async throws {
        try await PrivateBus.with { bus in
            let owner = try await bus.connect()
            let impostor = try await bus.connect()
            let receiver = try await bus.connect()
            #expect(try await owner.requestName("org.bleagent.Emitter") == .primaryOwner)
            let stream = try await receiver.signals(
                MatchRule(sender: "org.bleagent.Emitter", interface: SignalTests.interface))
            // This broader subscription makes the bus deliver every sender's signals to the receiver, so only the
            // local sender check can keep the impostor's out of `stream`.
            let everyone = try await receiver.signals(MatchRule(interface: SignalTests.interface))
            try SignalTests.emit(impostor, "Tick", 1)
            await impostor.flush()
            try SignalTests.emit(owner, "Tick", 2)
            var iterator = stream.makeAsyncIterator()
            #expect(try await iterator.next()?.decode(Int32.self) == Int32(2))

            // The name moves to another connection: its signals now match, the old owner's do not.
            #expect(try await owner.releaseName("org.bleagent.Emitter") == .released)
            #expect(try await impostor.requestName("org.bleagent.Emitter") == .primaryOwner)
            let changes = try await receiver.nameOwnerChanges(of: "org.bleagent.Emitter")
            _ = try await receiver.listNames()
            try SignalTests.emit(owner, "Tick", 3)
            try SignalTests.emit(impostor, "Tick", 4)
            #expect(try await iterator.next()?.decode(Int32.self) == Int32(4))
            changes.signals.finish()
            everyone.finish()
            for connection in [owner, impostor, receiver] { await connection.close() }
        }
    }

    @Test("a slow consumer's bounded buffer drops the overflow and counts it")
    func dropsCounted() async throws {
        try await PrivateBus.with { bus in
            let emitter = try await bus.connect()
            let receiver = try await bus.connect()
            let small = try await receiver.signals(
                MatchRule(interface: SignalTests.interface, member: "Tick"), buffering: .oldest(4))
            let marker = try await receiver.signals(MatchRule(interface: SignalTests.interface, member: "Done"))
            for value in 0..<50 { try SignalTests.emit(emitter, "Tick", Int32(value)) }
            try SignalTests.emit(emitter, "Done", 0)
            var markers = marker.makeAsyncIterator()
            _ = await markers.next()
            #expect(small.droppedCount == 46)
            var kept: [Int32] = []
            var iterator = small.makeAsyncIterator()
            for _ in 0..<4 { kept.append(try #require(await iterator.next()).decode(Int32.self)) }
            #expect(kept == [0, 1, 2, 3])
            await emitter.close()
            await receiver.close()
        }
    }

    @Test("streams end when their connection closes")
    func endsOnClose() async throws {
        try await PrivateBus.with { bus in
            let receiver = try await bus.connect()
            let stream = try await receiver.signals(MatchRule(interface: SignalTests.interface))
            let consumer = Task { () -> Int in
                var count = 0
                for await _ in stream { count += 1 }
                return count
            }
            await receiver.close()
            #expect(await consumer.value == 0)
            await #expect(throws: DBusError.self) {
                try await receiver.signals(MatchRule(interface: SignalTests.interface))
            }
        }
    }
}
