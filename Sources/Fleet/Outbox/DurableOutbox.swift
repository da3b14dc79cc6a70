import AgentCore
import Glibc
import IO
import JSON
import RoleKit
import Synchronization

/// The durable outbox: records plugins hand over are appended to
/// ``OutboxFile`` and fsync'd on the blocking pool (in order, through a
/// ``BlockingQueue``) before the plugin's call returns; the fleet delivers
/// them in order at QoS 1 and forgets each one only when the broker
/// acknowledged it. Bounded by record count and bytes
/// (`fleet.outbox`); `opening` records are refused from 90 % full, `closing`
/// ones only at 100 % (docs/fleet.md).
final class DurableOutbox: Sendable {
    struct Counters: Sendable, Hashable {
        var stored: Int64 = 0
        var delivered: Int64 = 0
        var refused: Int64 = 0
        var storageErrors: Int64 = 0
    }

    private struct State: Sendable {
        var pending: [Int64: OutboxEntry] = [:]
        /// Sequence numbers in order from `head`; acknowledged ones are skipped and trimmed lazily.
        var order: [Int64] = []
        var head = 0
        var bytes = 0
        /// Admitted, being written: counted against the bounds already.
        var reservedRecords = 0
        var reservedBytes = 0
        var nextSeq: Int64 = 1
        var counters = Counters()
        var lastError: String?
        var opened = false
        var acknowledgedSinceCompaction = 0
    }

    /// Record payloads (the serialized envelope) may not exceed this.
    static let maxRecordBytes = 64 << 10

    let limits: AgentConfig.Fleet.Outbox
    private let directory: String
    private let node: String
    private let worker: BlockingQueue
    private let file = Mutex<OutboxFile?>(nil)
    private let state = Mutex(State())
    /// Called (on any thread) when records become deliverable.
    private let ready: @Sendable () -> Void

    init(
        directory: String, node: String, limits: AgentConfig.Fleet.Outbox, worker: BlockingQueue,
        ready: @escaping @Sendable () -> Void
    ) {
        self.directory = directory
        self.node = node
        self.limits = limits
        self.worker = worker
        self.ready = ready
    }

    /// Opens the file on the blocking pool; records already in it become deliverable.
    func open() async throws(SystemError) {
        let contents = try await worker.run { [self] () throws(SystemError) -> OutboxLog.Contents in
            try file.withLock { slot throws(SystemError) -> OutboxLog.Contents in
                let (opened, contents) = try OutboxFile.open(directory: directory)
                slot = opened
                return contents
            }
        }
        state.withLock { state in
            for entry in contents.pending {
                state.pending[entry.seq] = entry
                state.order.append(entry.seq)
                state.bytes += entry.payload.count
            }
            state.nextSeq = contents.nextSeq
            state.opened = true
        }
        if !contents.pending.isEmpty { ready() }
    }

    /// Stores `record` durably; returns once it is synced to disk.
    func store(_ record: DurableRecord, at milliseconds: Int64) async throws(DurablePublishError) {
        try Self.validate(record)
        let admitted = state.withLock { state -> Result<OutboxEntry, DurablePublishError> in
            guard state.opened else { return .failure(.storage(state.lastError ?? "the outbox is not open")) }
            let seq = state.nextSeq
            let envelope: JSON = [
                "key": .string(record.key), "seq": .int(seq), "node": .string(node), "stream": .string(record.stream),
                "at": .int(milliseconds), "record": record.payload,
            ]
            let payload = Array(envelope.serialized(.compact).utf8)
            guard payload.count <= Self.maxRecordBytes else {
                return .failure(.invalid("the record is \(payload.count) bytes (at most \(Self.maxRecordBytes))"))
            }
            let share = record.admission == .opening ? 0.9 : 1.0
            let records = state.pending.count + state.reservedRecords + 1
            let bytes = state.bytes + state.reservedBytes + payload.count
            guard Double(records) <= Double(limits.maxRecords) * share, Double(bytes) <= Double(limits.maxBytes) * share
            else {
                state.counters.refused += 1
                return .failure(.outboxFull(depth: state.pending.count))
            }
            state.nextSeq += 1
            state.reservedRecords += 1
            state.reservedBytes += payload.count
            return .success(OutboxEntry(seq: seq, stream: record.stream, key: record.key, payload: payload))
        }
        let entry = try admitted.get()
        let outcome = await worker.run { [self] () -> Result<Void, SystemError> in
            file.withLock { file in
                guard let file else { return .failure(SystemError("write", path: "outbox", errno: .badFileDescriptor)) }
                return Result { () throws(SystemError) in try file.append(OutboxLog.enqueueLine(entry), sync: true)
                }
            }
        }
        state.withLock { state in
            state.reservedRecords -= 1
            state.reservedBytes -= entry.payload.count
            switch outcome {
            case .success:
                state.pending[entry.seq] = entry
                state.order.append(entry.seq)
                state.bytes += entry.payload.count
                state.counters.stored += 1
            case .failure(let error):
                state.counters.storageErrors += 1
                state.lastError = error.description
            }
        }
        if case .failure(let error) = outcome { throw .storage(error.description) }
        ready()
    }

    /// Up to `limit` records after those in `excluding`, in sequence order.
    func deliverable(limit: Int, excluding inFlight: Set<Int64>) -> [OutboxEntry] {
        state.withLock { state in
            var batch: [OutboxEntry] = []
            for seq in state.order[state.head...] where !inFlight.contains(seq) {
                guard batch.count < limit else { break }
                if let entry = state.pending[seq] { batch.append(entry) }
            }
            return batch
        }
    }

    /// The broker acknowledged `seq`: it is forgotten (the ack is written
    /// without fsync: a lost ack means one more delivery, never a lost record).
    func acknowledged(_ seq: Int64) {
        let compaction = state.withLock { state -> ([OutboxEntry], Int64)? in
            guard let entry = state.pending.removeValue(forKey: seq) else { return nil }
            while state.head < state.order.count, state.pending[state.order[state.head]] == nil { state.head += 1 }
            if state.head >= 1024 && state.head * 2 >= state.order.count {
                state.order.removeFirst(state.head)
                state.head = 0
            }
            state.bytes -= entry.payload.count
            state.counters.delivered += 1
            state.acknowledgedSinceCompaction += 1
            guard state.acknowledgedSinceCompaction >= 1024 || state.pending.isEmpty else { return nil }
            state.acknowledgedSinceCompaction = 0
            return (state.order[state.head...].compactMap { state.pending[$0] }, state.nextSeq)
        }
        worker.submit { [weak self] in
            guard let self else { return }
            let failure = file.withLock { file -> SystemError? in
                guard let file else { return nil }
                do throws(SystemError) {
                    try file.append(OutboxLog.ackLine(seq), sync: false)
                    if let (pending, next) = compaction, file.size > 1 << 20 || pending.isEmpty {
                        try file.compact(pending: pending, nextSeq: next)
                    }
                    return nil
                } catch {
                    return error
                }
            }
            if let failure { state.withLock { $0.lastError = failure.description } }
        }
    }

    /// The outbox's figures for `fleet.status`.
    var statusJSON: JSON {
        state.withLock { state in
            [
                "depth": .int(Int64(state.pending.count)), "bytes": .int(Int64(state.bytes)),
                "maxRecords": .int(Int64(limits.maxRecords)), "maxBytes": .int(Int64(limits.maxBytes)),
                "stored": .int(state.counters.stored), "delivered": .int(state.counters.delivered),
                "refused": .int(state.counters.refused), "storageErrors": .int(state.counters.storageErrors),
                "lastError": state.lastError.map(JSON.string) ?? .null,
            ]
        }
    }

    /// Records waiting.
    var depth: Int { state.withLock { $0.pending.count } }

    static let reservedStreams: Set<String> = ["status", "events", "rpc", "config", "sensors"]

    private static func validate(_ record: DurableRecord) throws(DurablePublishError) {
        let stream = record.stream.utf8
        guard (1...32).contains(stream.count),
            stream.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }),
            !reservedStreams.contains(record.stream)
        else {
            throw .invalid("\"\(record.stream)\" is not a stream name (1-32 of a-z 0-9 -, not a reserved topic)")
        }
        guard !record.key.isEmpty, record.key.utf8.count <= 256 else {
            throw .invalid("the key must be 1-256 bytes")
        }
    }
}
