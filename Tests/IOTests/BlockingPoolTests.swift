import BLETesting
import IO
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Applies records in its own order and queues each one's write the way the payment journal does.
actor Ledger {
    let queue = BlockingQueue()
    private(set) var applied: [Int] = []
    let written = Recorder<Int>()

    func record(_ value: Int) async {
        applied.append(value)
        let written = self.written
        await queue.run { written.append(value) }
    }
}

@Suite("the blocking pool, its ordered queue and the coalescing writer", .timeLimit(.minutes(1)))
struct BlockingPoolTests {
    @Test("run returns the work's value and throws its typed error, off the caller's thread")
    func runReturnsAndThrows() async throws {
        let pool = BlockingPool(threads: 2, name: "test-pool")
        let caller = UInt(pthread_self())
        let (value, thread) = await pool.run { (42, UInt(pthread_self())) }
        #expect(value == 42)
        #expect(thread != caller)
        await #expect(throws: SystemError.self) {
            try await pool.run { () throws(SystemError) in throw SystemError("test", errno: .ioError) }
        }
    }

    @Test("a blocked pool thread does not stop the other from running jobs")
    func oneStuckThreadLeavesTheOther() async throws {
        let pool = BlockingPool(threads: 2, name: "test-stuck")
        let (read, write) = try FileDescriptor.pipe()
        defer {
            read.close()
            write.close()
        }
        // Blocks in read(2) until the test writes.
        pool.submit {
            var byte: UInt8 = 0
            _ = withUnsafeMutableBytes(of: &byte) { try? read.read(into: $0) }
        }
        #expect(await pool.run { 7 } == 7)
        _ = try [UInt8]([1]).withUnsafeBytes { try write.write($0) }
    }

    @Test("jobs an actor queues run one at a time in the order the actor queued them, whatever the callers' order")
    func queueKeepsTheActorsOrder() async {
        let ledger = Ledger()
        await withTaskGroup(of: Void.self) { group in
            for value in 0..<300 { group.addTask { await ledger.record(value) } }
        }
        #expect(ledger.written.values.count == 300)
        #expect(await ledger.applied == ledger.written.values)
    }

    @Test("saves asked for during a slow write fold into one next write, and each returns after its value is written")
    func writerFoldsSaves() async throws {
        let (gate, release) = try FileDescriptor.pipe()
        defer {
            gate.close()
            release.close()
        }
        let started = Recorder<Int>()
        let written = Recorder<Int>()
        let writer = CoalescingWriter<Int> { (value) throws(SystemError) in
            started.append(value)
            // The first write waits (blocking its pool thread) until the test releases it.
            if value == 0 {
                var byte: UInt8 = 0
                _ = withUnsafeMutableBytes(of: &byte) { try? gate.read(into: $0) }
            }
            written.append(value)
        }
        let first = Task { try await writer.save(0) }
        await started.wait(for: 1)
        let requested = Recorder<Int>()
        let returned = Recorder<(Int, [Int])>()
        await withTaskGroup(of: Void.self) { group in
            for value in 1...50 {
                group.addTask {
                    requested.append(value)
                    try? await writer.save(value)
                    returned.append((value, written.values))
                }
            }
            await requested.wait(for: 50)
            _ = try? [UInt8]([1]).withUnsafeBytes { try release.write($0) }
        }
        try await first.value
        #expect(writer.counts.writes <= 3, "\(writer.counts)")
        #expect(writer.counts.writes + writer.counts.folded == 51)
        #expect(written.values.first == 0)
        // Every save was asked for while the first write ran: none may return before a later write ended.
        for (value, seen) in returned.values {
            #expect(seen.count >= 2, "save(\(value)) returned after the write that was running when it was asked for")
        }
    }
}
