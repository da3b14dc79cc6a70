/// Which Properties.GetAll refreshes run, for objects the mirror does not
/// hold (a device it pruned that advertises again): one per path and
/// interface at a time (a request for one already waiting or running is
/// merged into it), at most ``maximumInFlight`` calls at once, at most
/// ``capacity`` waiting (a request beyond that is dropped; the device's next
/// signal asks again). Pure: it says which refreshes to start.
public struct RefreshQueue: Sendable {
    /// One refresh: Properties.GetAll of `interface` at `path`.
    public struct Request: Hashable, Sendable {
        /// The object path.
        public var path: String
        /// The interface to read.
        public var interface: String

        /// A refresh of `interface` at `path`.
        public init(path: String, interface: String) {
            self.path = path
            self.interface = interface
        }
    }

    /// What the queue did so far.
    public struct Counters: Hashable, Sendable {
        /// Refreshes asked for.
        public var requested = 0
        /// Requests merged into one already waiting or running.
        public var merged = 0
        /// Requests dropped because ``capacity`` were waiting.
        public var dropped = 0
        /// Refreshes started.
        public var started = 0
        /// Refreshes finished (answered or failed).
        public var finished = 0
        /// Refreshes running now.
        public var inFlight = 0
        /// Refreshes waiting now.
        public var waiting = 0
    }

    /// The most refreshes running at once.
    public let maximumInFlight: Int
    /// The most refreshes waiting at once.
    public let capacity: Int
    private var waiting = FIFOBuffer<Request>(capacity: Int.max)
    private var waitingSet: Set<Request> = []
    private var running: Set<Request> = []
    private var counts = Counters()

    /// A queue; by default 4 at once and 4,096 waiting.
    public init(maximumInFlight: Int = 4, capacity: Int = 4096) {
        self.maximumInFlight = max(1, maximumInFlight)
        self.capacity = max(0, capacity)
    }

    /// What the queue did so far.
    public var counters: Counters {
        var counters = counts
        counters.inFlight = running.count
        counters.waiting = waitingSet.count
        return counters
    }

    /// Asks for `request`; returns it when it should start now.
    public mutating func request(_ request: Request) -> Request? {
        counts.requested += 1
        if running.contains(request) || waitingSet.contains(request) {
            counts.merged += 1
            return nil
        }
        if running.count < maximumInFlight {
            running.insert(request)
            counts.started += 1
            return request
        }
        guard waitingSet.count < capacity else {
            counts.dropped += 1
            return nil
        }
        waitingSet.insert(request)
        _ = waiting.push(request)
        return nil
    }

    /// `request` finished; returns the next one to start, if any.
    public mutating func finished(_ request: Request) -> Request? {
        guard running.remove(request) != nil else { return nil }
        counts.finished += 1
        while let next = waiting.pop() {
            guard waitingSet.remove(next) != nil else { continue }
            running.insert(next)
            counts.started += 1
            return next
        }
        return nil
    }

    /// Forgets what waits (bluetoothd left); running refreshes still finish.
    public mutating func dropWaiting() {
        while waiting.pop() != nil {}
        waitingSet = []
    }
}
