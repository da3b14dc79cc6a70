/// The bounded queue of lines waiting to be written to one client.
///
/// Replies are kept until written; if they pile up past
/// `maxReplyBytes` the client is not reading and must be disconnected
/// (``enqueueReply(_:)`` returns `false`). Events are capped at
/// `maxEvents`: a new event over the cap drops the oldest queued event that
/// has not started to be written, and every event carries the running count
/// of drops, so a slow client learns how many it missed. Pure state.
public struct ClientOutbox: Sendable {
    private struct Entry: Sendable {
        var bytes: [UInt8]
        var isEvent: Bool
    }

    /// The most events held at once.
    public let maxEvents: Int
    /// The most reply bytes held at once.
    public let maxReplyBytes: Int
    private var entries: [Entry] = []
    private var head = 0
    private var headWritten = 0
    private var queuedEvents = 0
    private var queuedReplyBytes = 0
    /// Events dropped for this client since it connected.
    public private(set) var droppedEvents: Int64 = 0
    /// Events offered to this client since it connected (delivered or dropped).
    public private(set) var eventSequence: Int64 = 0

    /// An empty outbox with the given caps.
    public init(maxEvents: Int, maxReplyBytes: Int) {
        self.maxEvents = max(1, maxEvents)
        self.maxReplyBytes = maxReplyBytes
    }

    /// Whether anything waits to be written.
    public var hasPending: Bool { head < entries.count }
    /// The number of queued events.
    public var eventCount: Int { queuedEvents }
    /// The bytes of the lines the outbox holds (written lines hold none).
    public var heldBytes: Int { entries.reduce(0) { $0 + $1.bytes.count } }

    /// Queues a reply line (with its newline); `false` if the reply bytes
    /// would pass the cap (the client should then be closed).
    public mutating func enqueueReply(_ line: [UInt8]) -> Bool {
        guard queuedReplyBytes + line.count <= maxReplyBytes else { return false }
        queuedReplyBytes += line.count
        entries.append(Entry(bytes: line, isEvent: false))
        return true
    }

    /// Queues an event; `render(sequence, dropped)` builds its line once the
    /// drop count is known (drops this event causes are included).
    public mutating func enqueueEvent(_ render: (_ sequence: Int64, _ dropped: Int64) -> [UInt8]) {
        eventSequence += 1
        if queuedEvents >= maxEvents, dropOldestEvent() {
            droppedEvents += 1
        }
        entries.append(Entry(bytes: render(eventSequence, droppedEvents), isEvent: true))
        queuedEvents += 1
    }

    /// Counts `count` events offered to this client and dropped before they
    /// reached its queue (the server's backlog overflowed).
    public mutating func recordDropped(_ count: Int64) {
        eventSequence += count
        droppedEvents += count
    }

    private mutating func dropOldestEvent() -> Bool {
        let first = headWritten > 0 ? head + 1 : head
        guard first < entries.count,
            let index = entries[first...].firstIndex(where: \.isEvent)
        else { return false }
        entries.remove(at: index)
        queuedEvents -= 1
        return true
    }

    /// The unwritten bytes of the line at the head of the queue.
    public var nextBytes: ArraySlice<UInt8>? {
        guard head < entries.count else { return nil }
        return entries[head].bytes[headWritten...]
    }

    /// Records that `count` bytes of ``nextBytes`` were written.
    public mutating func didWrite(_ count: Int) {
        guard head < entries.count else { return }
        headWritten += count
        let entry = entries[head]
        guard headWritten >= entry.bytes.count else { return }
        if entry.isEvent { queuedEvents -= 1 } else { queuedReplyBytes -= entry.bytes.count }
        // A written line's bytes go now, not when the written entries are compacted away (a reply can
        // be megabytes: a listing of 10,000 devices).
        entries[head].bytes = []
        head += 1
        headWritten = 0
        if head > 64 && head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }
}
