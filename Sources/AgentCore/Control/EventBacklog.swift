import ControlProtocol

/// The events published but not yet handed to the clients' outboxes: the
/// control server's loop takes them in batches. Bounded: past `capacity`
/// the oldest waiting event is dropped and counted by kind, so the clients
/// that wanted it learn of the drop through their `dropped` count. Memory
/// stays bounded however far the loop falls behind the publishers. Pure state.
public struct EventBacklog: Sendable {
    /// The most events waiting at once.
    public let capacity: Int
    private var events: [AgentEvent] = []
    private var head = 0
    /// Events dropped since the last ``take()``, by kind.
    public private(set) var dropped: [EventKind: Int64] = [:]
    /// Events dropped since the server started.
    public private(set) var droppedTotal: Int64 = 0

    /// An empty backlog holding at most `capacity` events (at least one).
    public init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// The number of events waiting.
    public var count: Int { events.count - head }

    /// Adds `event`, dropping the oldest waiting event when full.
    public mutating func append(_ event: AgentEvent) {
        if count >= capacity {
            dropped[events[head].kind, default: 0] += 1
            droppedTotal += 1
            head += 1
            if head * 2 >= events.count {
                events.removeFirst(head)
                head = 0
            }
        }
        events.append(event)
    }

    /// Takes every waiting event, oldest first, and the drops by kind since the last take.
    public mutating func take() -> (events: ArraySlice<AgentEvent>, dropped: [EventKind: Int64]) {
        defer {
            events = []
            head = 0
            dropped = [:]
        }
        return (events[head...], dropped)
    }
}
