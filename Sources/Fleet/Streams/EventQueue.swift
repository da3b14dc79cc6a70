/// A bounded FIFO of messages waiting for the broker, for streams where a
/// lost message costs little (events): when full, the oldest is dropped and
/// counted. Memory is bounded by `limit`, never by time.
struct EventQueue: Sendable {
    struct Message: Sendable, Hashable {
        var topic: String
        var payload: [UInt8]
    }

    let limit: Int
    private var ring: [Message?]
    private var head = 0
    private(set) var count = 0
    /// Messages dropped because the queue was full.
    private(set) var dropped: Int64 = 0

    init(limit: Int) {
        self.limit = max(1, limit)
        ring = Array(repeating: nil, count: max(1, limit))
    }

    /// Appends `message`, dropping the oldest when full.
    mutating func push(_ message: Message) {
        if count == limit {
            head = (head + 1) % limit
            count -= 1
            dropped += 1
        }
        ring[(head + count) % limit] = message
        count += 1
    }

    /// The oldest message, removed.
    mutating func pop() -> Message? {
        guard count > 0 else { return nil }
        let message = ring[head]
        ring[head] = nil
        head = (head + 1) % limit
        count -= 1
        return message
    }
}
