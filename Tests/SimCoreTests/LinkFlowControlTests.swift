import SimCore
import Testing

/// The link model's flow control: indications one at a time, a connection event each, and how
/// long an AcquireWrite socket stays unread.
@Suite("the link model's flow control")
struct LinkFlowControlTests {
    static func at(_ seconds: Double) -> SimInstant { SimInstant.zero.advanced(bySeconds: seconds) }

    @Test("an indication's confirmation comes one connection event later")
    func roundTrip() {
        #expect(LinkModel(connectionIntervalMs: 30).indicationRoundTrip == 0.03)
        #expect(LinkModel(connectionIntervalMs: 7.5).indicationRoundTrip == 0.0075)
    }

    @Test("indications handed over together are confirmed one round trip apart, in order")
    func oneOutstanding() {
        var queue = IndicationQueue()
        let confirmations = (0..<3).map { _ in queue.confirmation(at: Self.at(1), roundTrip: 0.1).seconds }
        #expect(zip(confirmations, [1.1, 1.2, 1.3]).allSatisfy { abs($0 - $1) < 1e-6 }, "\(confirmations)")
    }

    @Test("an indication after the bearer went idle waits only its own round trip")
    func idleBearer() {
        var queue = IndicationQueue()
        _ = queue.confirmation(at: Self.at(1), roundTrip: 0.1)
        #expect(abs(queue.confirmation(at: Self.at(5), roundTrip: 0.1).seconds - 5.1) < 1e-6)
        // One handed over while that one is outstanding goes after it.
        #expect(abs(queue.confirmation(at: Self.at(5.05), roundTrip: 0.1).seconds - 5.2) < 1e-6)
    }

    @Test("an AcquireWrite socket stays unread until the link takes the next write command")
    func socketWait() {
        var writes = PacedWrites()
        #expect(writes.wait(at: Self.at(1)) == 0)
        writes.enqueue(handle: 3, bytes: [1], at: Self.at(1), seconds: 0.1)
        #expect(abs(writes.wait(at: Self.at(1)) - 0.1) < 1e-6)
        #expect(abs(writes.wait(at: Self.at(1.04)) - 0.06) < 1e-6)
        #expect(writes.wait(at: Self.at(2)) == 0)
        // A second write queued behind the first: the wait covers both.
        writes.enqueue(handle: 3, bytes: [2], at: Self.at(1), seconds: 0.1)
        #expect(abs(writes.wait(at: Self.at(1)) - 0.2) < 1e-6)
    }
}
