/// The per-peripheral GATT operation queue as a pure state machine.
///
/// BlueZ runs one operation per attribute at a time and answers a second one
/// with `org.bluez.Error.InProgress`. So: operations on the same attribute
/// (``OperationQueue/Operation/attribute``, e.g. a characteristic's object
/// path) run one at a time in FIFO order; operations on different attributes
/// run side by side. Every operation has a deadline; an InProgress answer is
/// retried with exponential backoff a bounded number of times; when the link
/// drops every pending operation fails at once with ``BLEError/notConnected``.
///
/// The shell performs the returned ``Action``s: it starts the BlueZ call on
/// `.start`, and on `.fail` resumes the caller with the error. It reports
/// each BlueZ answer with ``completed(_:outcome:now:)``, calls ``tick(now:)``
/// at ``nextWakeup``, and ``linkDropped()`` when Device1.Connected goes false.
struct OperationQueue: Sendable {
    /// Identifies one queued operation.
    public typealias ID = UInt64

    /// How operations are timed and retried.
    typealias Policy = GATTOperationPolicy

    /// A queued operation.
    public struct Operation: Hashable, Sendable {
        /// Its identifier.
        public let id: ID
        /// The attribute it works on; one operation per attribute at a time.
        public let attribute: String
        /// When it fails with ``BLEError/timeout`` if not finished.
        public let deadline: BLEInstant
        /// How many times it has been started.
        public fileprivate(set) var attempts: Int
        /// When a retry is due, while waiting out a backoff.
        public fileprivate(set) var retryAt: BLEInstant?
    }

    /// What BlueZ answered to a started operation.
    public enum Outcome: Hashable, Sendable {
        /// It finished (successfully or with an error that is not InProgress);
        /// the shell already has the result.
        case finished
        /// `org.bluez.Error.InProgress`: retry later.
        case inProgress
    }

    /// What the shell must do.
    public enum Action: Hashable, Sendable {
        /// Start (or restart) the BlueZ call of this operation.
        case start(ID)
        /// Deliver the result the shell got for this operation.
        case deliver(ID)
        /// Fail the operation with this error (its BlueZ call, if any, is
        /// abandoned; a late answer is ignored).
        case fail(ID, BLEError)
    }

    /// The timing policy.
    public let policy: Policy
    private var nextID: ID = 1
    private var queues: [String: [Operation]] = [:]
    private var attributeOf: [ID: String] = [:]

    /// An empty queue with `policy`.
    public init(policy: Policy = Policy()) {
        self.policy = policy
    }

    /// The operations waiting or running, in no particular order.
    public var pending: [Operation] { queues.values.flatMap { $0 } }

    /// Whether the operation is still pending.
    public func isPending(_ id: ID) -> Bool { attributeOf[id] != nil }

    /// Queues an operation on `attribute` at `now`; returns its id and
    /// `.start` when the attribute was idle.
    public mutating func enqueue(attribute: String, now: BLEInstant) -> (ID, [Action]) {
        let id = nextID
        nextID += 1
        let operation = Operation(id: id, attribute: attribute, deadline: now + policy.timeout, attempts: 0)
        attributeOf[id] = attribute
        queues[attribute, default: []].append(operation)
        if queues[attribute]?.count == 1 {
            queues[attribute]?[0].attempts = 1
            return (id, [.start(id)])
        }
        return (id, [])
    }

    /// Reports BlueZ's answer to the running operation `id`. Answers for
    /// operations that are no longer running (timed out, failed on link
    /// loss) are ignored.
    public mutating func completed(_ id: ID, outcome: Outcome, now: BLEInstant) -> [Action] {
        guard let attribute = attributeOf[id], let head = queues[attribute]?.first, head.id == id,
            head.retryAt == nil
        else { return [] }
        switch outcome {
        case .finished:
            return [.deliver(id)] + removeHead(of: attribute)
        case .inProgress:
            if head.attempts >= policy.maximumAttempts {
                return [.fail(id, BLEError(.inProgress, bluezError: .init(.inProgress)))] + removeHead(of: attribute)
            }
            queues[attribute]?[0].retryAt = now + policy.backoff(afterAttempt: head.attempts)
            return []
        }
    }

    /// Cancels `id` (its caller went away): fails it with ``BLEError/cancelled``.
    public mutating func cancel(_ id: ID) -> [Action] {
        guard let attribute = attributeOf[id], let index = queues[attribute]?.firstIndex(where: { $0.id == id })
        else { return [] }
        if index == 0 { return [.fail(id, .cancelled)] + removeHead(of: attribute) }
        queues[attribute]?.remove(at: index)
        attributeOf[id] = nil
        return [.fail(id, .cancelled)]
    }

    /// Fails operations whose deadline has passed and restarts those whose
    /// backoff is over.
    public mutating func tick(now: BLEInstant) -> [Action] {
        var actions: [Action] = []
        for attribute in queues.keys.sorted() {
            guard var list = queues[attribute] else { continue }
            let expired = list.filter { $0.deadline <= now }
            for operation in expired { actions.append(.fail(operation.id, .timeout)) }
            let headExpired = list.first.map { $0.deadline <= now } ?? false
            list.removeAll { $0.deadline <= now }
            for operation in expired { attributeOf[operation.id] = nil }
            if list.isEmpty {
                queues[attribute] = nil
                continue
            }
            if headExpired {
                list[0].attempts = 1
                list[0].retryAt = nil
                actions.append(.start(list[0].id))
            } else if let retryAt = list[0].retryAt, retryAt <= now {
                list[0].retryAt = nil
                list[0].attempts += 1
                actions.append(.start(list[0].id))
            }
            queues[attribute] = list
        }
        return actions
    }

    /// The link dropped: every pending operation fails with ``BLEError/notConnected``.
    public mutating func linkDropped() -> [Action] {
        let all = pending.sorted { $0.id < $1.id }
        queues = [:]
        attributeOf = [:]
        return all.map { .fail($0.id, .notConnected) }
    }

    /// The earliest deadline or retry time, when ``tick(now:)`` must run next.
    public var nextWakeup: BLEInstant? {
        pending.flatMap { [$0.deadline, $0.retryAt].compactMap { $0 } }.min()
    }

    private mutating func removeHead(of attribute: String) -> [Action] {
        guard var list = queues[attribute], !list.isEmpty else { return [] }
        let head = list.removeFirst()
        attributeOf[head.id] = nil
        guard !list.isEmpty else {
            queues[attribute] = nil
            return []
        }
        list[0].attempts = 1
        queues[attribute] = list
        return [.start(list[0].id)]
    }
}

/// How the central's GATT operations are timed and retried (``CentralManager/Options/operationPolicy``).
public struct GATTOperationPolicy: Hashable, Sendable {
    /// The deadline of an operation, counted from when it was enqueued.
    public var timeout: Duration
    /// How many times an operation may be started in all (1 = no retry).
    public var maximumAttempts: Int
    /// The wait before the first retry; doubled for each further one.
    public var initialBackoff: Duration
    /// The longest wait between retries.
    public var maximumBackoff: Duration

    /// A policy; defaults: 30 s deadline, 5 attempts, 50 ms backoff up to 1 s.
    public init(
        timeout: Duration = .seconds(30), maximumAttempts: Int = 5, initialBackoff: Duration = .milliseconds(50),
        maximumBackoff: Duration = .seconds(1)
    ) {
        self.timeout = timeout
        self.maximumAttempts = max(1, maximumAttempts)
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
    }

    /// The wait before attempt number `attempt + 1`, after `attempt` attempts.
    public func backoff(afterAttempt attempt: Int) -> Duration {
        var wait = initialBackoff
        for _ in 1..<max(1, attempt) {
            wait = wait * 2
            if wait >= maximumBackoff { return maximumBackoff }
        }
        return min(wait, maximumBackoff)
    }
}
