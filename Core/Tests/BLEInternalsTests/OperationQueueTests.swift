import Testing

@testable import BLE

@Suite struct OperationQueueTests {
    let policy = GATTOperationPolicy(
        timeout: .seconds(10), maximumAttempts: 3, initialBackoff: .milliseconds(100),
        maximumBackoff: .milliseconds(150))
    let t0 = BLEInstant.zero

    @Test func operationsOnOneAttributeRunOneAtATimeInFIFOOrder() {
        var queue = OperationQueue(policy: policy)
        let (a, startA) = queue.enqueue(attribute: "char1", now: t0)
        let (b, startB) = queue.enqueue(attribute: "char1", now: t0)
        let (c, startC) = queue.enqueue(attribute: "char1", now: t0)
        #expect(startA == [.start(a)])
        #expect(startB.isEmpty && startC.isEmpty)
        #expect(queue.completed(a, outcome: .finished, now: t0) == [.deliver(a), .start(b)])
        #expect(queue.completed(b, outcome: .finished, now: t0) == [.deliver(b), .start(c)])
        #expect(queue.completed(c, outcome: .finished, now: t0) == [.deliver(c)])
        #expect(queue.pending.isEmpty)
    }

    @Test func differentAttributesRunSideBySide() {
        var queue = OperationQueue(policy: policy)
        let (a, startA) = queue.enqueue(attribute: "char1", now: t0)
        let (b, startB) = queue.enqueue(attribute: "char2", now: t0)
        #expect(startA == [.start(a)])
        #expect(startB == [.start(b)])
    }

    @Test func anOperationPastItsDeadlineFailsWithTimeoutAndTheNextStarts() {
        var queue = OperationQueue(policy: policy)
        let (a, _) = queue.enqueue(attribute: "char1", now: t0)
        let (b, _) = queue.enqueue(attribute: "char1", now: t0 + .seconds(5))
        #expect(queue.nextWakeup == t0 + .seconds(10))
        #expect(queue.tick(now: t0 + .seconds(9)).isEmpty)
        #expect(queue.tick(now: t0 + .seconds(10)) == [.fail(a, .timeout), .start(b)])
        #expect(queue.completed(a, outcome: .finished, now: t0 + .seconds(11)).isEmpty, "a late answer is ignored")
        #expect(queue.tick(now: t0 + .seconds(15)) == [.fail(b, .timeout)])
    }

    @Test func inProgressIsRetriedWithBackoffThenFailsAfterTheLastAttempt() {
        var queue = OperationQueue(policy: policy)
        let (a, _) = queue.enqueue(attribute: "char1", now: t0)
        #expect(queue.completed(a, outcome: .inProgress, now: t0).isEmpty)
        #expect(queue.nextWakeup == t0 + .milliseconds(100))
        #expect(queue.tick(now: t0 + .milliseconds(99)).isEmpty)
        #expect(queue.tick(now: t0 + .milliseconds(100)) == [.start(a)])
        #expect(queue.completed(a, outcome: .inProgress, now: t0 + .milliseconds(100)).isEmpty)
        #expect(queue.nextWakeup == t0 + .milliseconds(250), "doubled backoff capped at 150 ms")
        #expect(queue.tick(now: t0 + .milliseconds(250)) == [.start(a)])
        let last = queue.completed(a, outcome: .inProgress, now: t0 + .milliseconds(250))
        guard case .fail(a, let error) = last.first else {
            Issue.record("expected a failure, got \(last)")
            return
        }
        #expect(error.code == .inProgress)
        #expect(error.bluezError?.name == .inProgress)
        #expect(!queue.isPending(a))
    }

    @Test func aRetriedOperationThatSucceedsIsDelivered() {
        var queue = OperationQueue(policy: policy)
        let (a, _) = queue.enqueue(attribute: "char1", now: t0)
        _ = queue.completed(a, outcome: .inProgress, now: t0)
        _ = queue.tick(now: t0 + .milliseconds(100))
        #expect(queue.completed(a, outcome: .finished, now: t0 + .milliseconds(120)) == [.deliver(a)])
    }

    @Test func aLinkDropFailsEveryPendingOperationAtOnce() {
        var queue = OperationQueue(policy: policy)
        let (a, _) = queue.enqueue(attribute: "char1", now: t0)
        let (b, _) = queue.enqueue(attribute: "char1", now: t0)
        let (c, _) = queue.enqueue(attribute: "char2", now: t0)
        _ = queue.completed(c, outcome: .inProgress, now: t0)
        #expect(queue.linkDropped() == [.fail(a, .notConnected), .fail(b, .notConnected), .fail(c, .notConnected)])
        #expect(queue.pending.isEmpty)
        #expect(queue.nextWakeup == nil)
        #expect(queue.completed(a, outcome: .finished, now: t0).isEmpty)
    }

    @Test func cancellingTheRunningOperationStartsTheNext() {
        var queue = OperationQueue(policy: policy)
        let (a, _) = queue.enqueue(attribute: "char1", now: t0)
        let (b, _) = queue.enqueue(attribute: "char1", now: t0)
        #expect(queue.cancel(a) == [.fail(a, .cancelled), .start(b)])
        #expect(queue.cancel(a).isEmpty)
    }

    @Test func backoffDoublesUpToTheMaximum() {
        let policy = GATTOperationPolicy(initialBackoff: .milliseconds(50), maximumBackoff: .seconds(1))
        #expect(policy.backoff(afterAttempt: 1) == .milliseconds(50))
        #expect(policy.backoff(afterAttempt: 2) == .milliseconds(100))
        #expect(policy.backoff(afterAttempt: 3) == .milliseconds(200))
        #expect(policy.backoff(afterAttempt: 10) == .seconds(1))
    }
}
