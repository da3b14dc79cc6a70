import AgentCore
import BLETesting
import Glibc
import IO
import JSON
import RoleKit
import Testing

@testable import Fleet

@Suite("the durable outbox")
struct OutboxTests {
    static func entry(_ seq: Int64, key: String = "k") -> OutboxEntry {
        OutboxEntry(seq: seq, stream: "payments", key: key, payload: Array(#"{"seq":\#(seq)}"#.utf8))
    }

    @Test("a log replays to the records not acknowledged, in order, and the next sequence number")
    func replay() {
        let bytes =
            OutboxLog.enqueueLine(Self.entry(1)) + OutboxLog.enqueueLine(Self.entry(2)) + OutboxLog.ackLine(1)
            + OutboxLog.enqueueLine(Self.entry(3, key: "x"))
        let contents = OutboxLog.decode(bytes)
        #expect(contents.pending == [Self.entry(2), Self.entry(3, key: "x")])
        #expect(contents.nextSeq == 4)
        #expect(contents.validLength == bytes.count)
    }

    @Test("a torn or damaged tail ends the replay; what came before stands")
    func tornTail() {
        let good = OutboxLog.enqueueLine(Self.entry(1))
        var torn = OutboxLog.enqueueLine(Self.entry(2))
        torn.removeLast(5)
        #expect(OutboxLog.decode(good + torn).pending == [Self.entry(1)])
        #expect(OutboxLog.decode(good + torn).validLength == good.count)
        var flipped = OutboxLog.enqueueLine(Self.entry(2))
        flipped[flipped.count - 4] ^= 0x01
        #expect(OutboxLog.decode(good + flipped).pending == [Self.entry(1)])
        #expect(OutboxLog.decode(good + Array("A x\n".utf8)).validLength == good.count)
    }

    @Test("a compacted log keeps the sequence going after every record was acknowledged")
    func nextLine() {
        let contents = OutboxLog.decode(OutboxLog.nextLine(41))
        #expect(contents.pending.isEmpty)
        #expect(contents.nextSeq == 41)
    }

    @Test("CRC-32 matches zlib's")
    func crc() {
        #expect(CRC32.hex(Array("123456789".utf8)) == "cbf43926")
        #expect(CRC32.hex([]) == "00000000")
    }

    static func directory() -> String {
        var template = Array("/tmp/bleagent-outbox-XXXXXX".utf8CString)
        _ = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    @Test(
        "stored records survive a reopen until acknowledged; opening records are refused at 90 %, closing ones only when full"
    )
    func storeAcknowledgeAndBounds() async throws {
        let directory = Self.directory()
        defer { removeTree(directory) }
        let worker = BlockingQueue()
        var limits = AgentConfig.Fleet.Outbox()
        limits.maxRecords = 20
        let outbox = DurableOutbox(directory: directory, node: "n", limits: limits, worker: worker, ready: {})
        try await outbox.open()
        for index in 0..<18 {
            try await outbox.store(
                DurableRecord(stream: "payments", key: "k\(index)", payload: ["i": .int(Int64(index))]), at: 0)
        }
        await #expect(throws: DurablePublishError.outboxFull(depth: 18)) {
            try await outbox.store(DurableRecord(stream: "payments", key: "late", payload: [:]), at: 0)
        }
        try await outbox.store(DurableRecord(stream: "payments", key: "c1", payload: [:], admission: .closing), at: 0)
        try await outbox.store(DurableRecord(stream: "payments", key: "c2", payload: [:], admission: .closing), at: 0)
        await #expect(throws: DurablePublishError.outboxFull(depth: 20)) {
            try await outbox.store(
                DurableRecord(stream: "payments", key: "c3", payload: [:], admission: .closing), at: 0)
        }
        await #expect(throws: DurablePublishError.self) {
            try await outbox.store(DurableRecord(stream: "status", key: "k", payload: [:]), at: 0)
        }
        let batch = outbox.deliverable(limit: 5, excluding: [])
        #expect(batch.map { $0.seq } == [1, 2, 3, 4, 5])
        let envelope = try JSON(parsing: batch[0].payload)
        #expect(envelope["key"] == "k0")
        #expect(envelope["node"] == "n")
        #expect(envelope["record"]?["i"] == 0)
        for entry in batch { outbox.acknowledged(entry.seq) }
        _ = await worker.run { () -> Int in 0 }  // the acks are written in order before this runs

        let reopened = DurableOutbox(directory: directory, node: "n", limits: limits, worker: worker, ready: {})
        try await reopened.open()
        #expect(reopened.depth == 15)
        #expect(reopened.deliverable(limit: 1, excluding: []).first?.seq == 6)
        try await reopened.store(DurableRecord(stream: "payments", key: "after", payload: [:]), at: 0)
        #expect(reopened.deliverable(limit: 100, excluding: []).last?.seq == 21)
    }
}
