import Synchronization

/// One notification stream's queue and whether it holds its characteristic's socket paused.
final class NotificationSubscriber: Sendable {
    let queue: AsyncQueue<FIFOBuffer<[UInt8]>>
    let paused = Atomic<Bool>(false)

    init(capacity: Int) {
        queue = AsyncQueue(FIFOBuffer(capacity: capacity))
    }
}

/// The open notification streams by characteristic, and the sockets paused for them.
struct NotificationRoutes: Sendable {
    var subscribers: [CharacteristicReference: [UInt64: NotificationSubscriber]] = [:]
    var nextID: UInt64 = 0
    /// Characteristic path → how many subscribers hold it paused.
    var pausedBy: [String: Int] = [:]
    /// Which subscriber paused which path.
    var pausedPaths: [UInt64: String] = [:]
    /// Characteristic path → reference, for paths that delivered values; emptied whenever services or
    /// characteristics come or go (the instance numbers may change).
    var references: [String: CharacteristicReference] = [:]
    var pauses = 0
    /// The counters of streams that ended.
    var ended = QueueCounters()
    /// Values of wanted subscriptions that came while no stream of theirs was open, waiting for the next
    /// ``CentralManager/notificationStream(for:)`` (at most the stream capacity per subscription; when full,
    /// the oldest is dropped and counted).
    var held: [CharacteristicReference: FIFOBuffer<[UInt8]>] = [:]
    /// What went through ``held``: offered, handed to a stream (delivered), dropped, waiting now.
    var heldCounters = QueueCounters()

    var streamCount: Int { subscribers.values.reduce(0) { $0 + $1.count } }

    var counters: QueueCounters {
        subscribers.values.reduce(ended) { total, streams in
            streams.values.reduce(total) { $0 + $1.queue.counters }
        }
    }

    /// Holds `value` for a wanted subscription with no open stream.
    mutating func hold(_ value: [UInt8], for reference: CharacteristicReference, capacity: Int) {
        heldCounters.offered += 1
        let dropped = held[reference, default: FIFOBuffer(capacity: capacity)].push(value)
        heldCounters.dropped += dropped
        heldCounters.waiting += 1 - dropped
        heldCounters.highWater = max(heldCounters.highWater, held[reference]?.count ?? 0)
    }

    /// Takes the values held for `reference` (for its new stream).
    mutating func takeHeld(for reference: CharacteristicReference) -> [[UInt8]] {
        guard var buffer = held.removeValue(forKey: reference) else { return [] }
        var values: [[UInt8]] = []
        while let value = buffer.pop() { values.append(value) }
        heldCounters.delivered += values.count
        heldCounters.waiting = held.values.reduce(0) { $0 + $1.count }
        return values
    }

    /// Forgets the values held for `reference` (its subscription ended); they count as dropped.
    mutating func dropHeld(for reference: CharacteristicReference) {
        guard let buffer = held.removeValue(forKey: reference) else { return }
        heldCounters.dropped += buffer.count
        heldCounters.waiting = held.values.reduce(0) { $0 + $1.count }
    }
}

extension CentralManager {
    /// A new stream of the values of the characteristic `reference` names (see ``NotificationStream``),
    /// starting with the values its subscription received while no stream was open.
    func notificationStream(for reference: CharacteristicReference) -> NotificationStream {
        let capacity = options.notificationQueueCapacity
        let subscriber = NotificationSubscriber(capacity: capacity)
        let id = state.withLock { state in
            state.notifications.nextID += 1
            let id = state.notifications.nextID
            for value in state.notifications.takeHeld(for: reference) { subscriber.queue.push(value) }
            state.notifications.subscribers[reference, default: [:]][id] = subscriber
            return id
        }
        let queue = subscriber.queue
        queue.setOnDrain { [weak self, weak subscriber] waiting in
            guard waiting <= capacity / 4, let subscriber, subscriber.paused.load(ordering: .relaxed) else { return }
            self?.notificationStreamDrained(id, reference: reference, ended: false)
        }
        queue.setOnTermination { [weak self] in
            self?.notificationStreamDrained(id, reference: reference, ended: true)
        }
        return NotificationStream(queue: queue, lifetime: QueueLifetime { queue.finish() }, capacity: capacity)
    }

    /// Puts `value` in every stream of the characteristic at `path` (or, while none is open and its
    /// subscription is wanted, holds it for the next stream); a stream past half full pauses an
    /// AcquireNotify socket (``CentralBackend/setNotificationsPaused(_:characteristic:)``).
    func deliverNotification(_ value: [UInt8], characteristic path: String, state: inout State, effects: inout Effects)
    {
        guard !state.notifications.subscribers.isEmpty || !state.subscriptions.isEmpty else { return }
        let reference: CharacteristicReference
        if let known = state.notifications.references[path] {
            reference = known
        } else {
            guard let found = state.mirror.characteristicReference(at: path) else { return }
            state.notifications.references[path] = found
            reference = found
        }
        guard let streams = state.notifications.subscribers[reference] else {
            if state.subscriptions.status(of: reference) != nil {
                state.notifications.hold(value, for: reference, capacity: options.notificationQueueCapacity)
            }
            return
        }
        let high = options.notificationQueueCapacity / 2
        for (id, subscriber) in streams {
            let queue = subscriber.queue
            let outcome = queue.push(value)
            if outcome.needsWake { state.wakes.append { queue.wake() } }
            guard outcome.waiting >= high, !subscriber.paused.load(ordering: .relaxed) else { continue }
            // Flag first, then look again: a consumer that drained meanwhile without seeing the flag must not be
            // left waiting on a paused socket; one that sees it waits for this lock and resumes the socket.
            subscriber.paused.store(true, ordering: .relaxed)
            guard queue.waitingCount > options.notificationQueueCapacity / 4 else {
                subscriber.paused.store(false, ordering: .relaxed)
                continue
            }
            state.notifications.pausedPaths[id] = path
            state.notifications.pausedBy[path, default: 0] += 1
            if state.notifications.pausedBy[path] == 1 {
                state.notifications.pauses += 1
                effects.pauses.append((path, true))
            }
        }
    }

    /// A stream that held its socket paused caught up (or ended): resume the
    /// socket when no other stream holds it; an ended stream is forgotten.
    private func notificationStreamDrained(_ id: UInt64, reference: CharacteristicReference, ended: Bool) {
        let resume = state.withLock { state -> String? in
            if ended, let subscriber = state.notifications.subscribers[reference]?.removeValue(forKey: id) {
                var counters = subscriber.queue.counters
                counters.waiting = 0
                state.notifications.ended = state.notifications.ended + counters
                if state.notifications.subscribers[reference]?.isEmpty == true {
                    state.notifications.subscribers[reference] = nil
                }
                subscriber.paused.store(false, ordering: .relaxed)
            } else {
                state.notifications.subscribers[reference]?[id]?.paused.store(false, ordering: .relaxed)
            }
            guard let path = state.notifications.pausedPaths.removeValue(forKey: id) else { return nil }
            state.notifications.pausedBy[path, default: 1] -= 1
            guard state.notifications.pausedBy[path] == 0 else { return nil }
            state.notifications.pausedBy[path] = nil
            return path
        }
        if let resume { backend.setNotificationsPaused(false, characteristic: resume) }
    }
}
