import AgentCore
import Glibc
import Synchronization
import Testing

/// A pipe whose read end a test or a loop handler waits on.
final class TestPipe: Sendable {
    let read: Int32
    let write: Int32

    init() {
        var fds: [Int32] = [0, 0]
        precondition(pipe(&fds) == 0, "pipe: \(errno)")
        (read, write) = (fds[0], fds[1])
    }

    deinit {
        close(read)
        close(write)
    }

    func signal() {
        var byte: UInt8 = 1
        _ = Glibc.write(write, &byte, 1)
    }

    /// Waits for a byte; false past the deadline.
    func wait(milliseconds: Int32 = deadlineMilliseconds) -> Bool {
        var poller = pollfd(fd: read, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, milliseconds) == 1 else { return false }
        var byte: UInt8 = 0
        return Glibc.read(read, &byte, 1) == 1
    }
}

@Suite("event loop")
struct EventLoopTests {
    @Test("a steady stream of jobs never keeps the loop from its descriptors")
    func jobsDoNotStarveDescriptors() throws {
        let loop = try EventLoop()
        let readable = TestPipe()
        let served = TestPipe()
        let stopJobs = Atomic<Bool>(false)
        let jobsRun = Atomic<Int>(0)
        let readFD = readable.read
        let servedFD = served.write
        loop.register(readFD, events: Int16(POLLIN)) { _ in
            var byte: UInt8 = 0
            _ = Glibc.read(readFD, &byte, 1)
            var one: UInt8 = 1
            _ = Glibc.write(servedFD, &one, 1)
        }
        // Each job queues the next, as events published faster than the loop handles them do.
        @Sendable func job() {
            jobsRun.add(1, ordering: .relaxed)
            if !stopJobs.load(ordering: .relaxed) { loop.execute(job) }
        }
        loop.execute(job)
        loop.runOnNewThread()
        readable.signal()
        #expect(served.wait(), "the readable descriptor was served while jobs kept coming")
        #expect(jobsRun.load(ordering: .relaxed) > 0)
        stopJobs.store(true, ordering: .relaxed)
        let stopped = TestPipe()
        let stoppedFD = stopped.write
        loop.execute {
            var one: UInt8 = 1
            _ = Glibc.write(stoppedFD, &one, 1)
            loop.stop()
        }
        #expect(stopped.wait())
        loop.unregister(readFD)
    }
}
