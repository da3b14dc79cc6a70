/// The samples of one sensor from the last ``length`` seconds, at most
/// ``capacity`` of them, kept in time order.
///
/// Time is never read here: every call that depends on it takes `now`, so
/// the caller's clock (the system's, or a test's) decides. A sample is inside
/// the window at `now` when `now - length < time`.
public struct RollingWindow: Sendable, Hashable {
    /// The window's length in seconds.
    public private(set) var length: Double
    /// The most samples kept; past it the oldest is dropped.
    public let capacity: Int
    /// The samples, oldest first.
    public private(set) var samples: [Sample] = []
    /// How many samples were dropped because the window was full.
    public private(set) var droppedForCapacity = 0

    /// An empty window of `length` seconds holding at most `capacity` samples.
    public init(length: Double, capacity: Int) {
        self.length = length
        self.capacity = max(1, capacity)
    }

    /// Adds a sample, keeping time order (a late sample is inserted in
    /// place). Returns false, and keeps nothing, when the sample is already
    /// outside the window at `now` or is not finite.
    @discardableResult
    public mutating func add(_ sample: Sample, now: Double) -> Bool {
        guard sample.value.isFinite, sample.time.isFinite, sample.time > now - length else { return false }
        if let last = samples.last, sample.time < last.time {
            let index = samples.firstIndex { $0.time > sample.time } ?? samples.endIndex
            samples.insert(sample, at: index)
        } else {
            samples.append(sample)
        }
        if samples.count > capacity {
            samples.removeFirst(samples.count - capacity)
            droppedForCapacity += 1
        }
        expire(now: now)
        return true
    }

    /// Drops the samples that are outside the window at `now`.
    public mutating func expire(now: Double) {
        let cutoff = now - length
        let stale = samples.prefix { $0.time <= cutoff }.count
        if stale > 0 { samples.removeFirst(stale) }
    }

    /// Changes the window's length; samples outside the new window at `now`
    /// are dropped.
    public mutating func setLength(_ seconds: Double, now: Double) {
        length = seconds
        expire(now: now)
    }

    /// The statistics of the samples inside the window at `now`.
    public func summary(now: Double) -> WindowSummary {
        let cutoff = now - length
        var summary = WindowSummary(windowSeconds: length)
        var sum = 0.0
        for sample in samples where sample.time > cutoff && sample.time <= now {
            summary.count += 1
            summary.minimum = Swift.min(summary.minimum ?? sample.value, sample.value)
            summary.maximum = Swift.max(summary.maximum ?? sample.value, sample.value)
            sum += sample.value
            summary.last = sample
        }
        if summary.count > 0 { summary.mean = sum / Double(summary.count) }
        return summary
    }
}

/// Count, minimum, maximum, mean and last of a window at one moment.
/// The optional statistics are nil when the window is empty.
public struct WindowSummary: Sendable, Hashable {
    /// The window's length in seconds.
    public var windowSeconds: Double
    /// How many samples.
    public var count = 0
    /// The smallest value.
    public var minimum: Double?
    /// The largest value.
    public var maximum: Double?
    /// The arithmetic mean.
    public var mean: Double?
    /// The newest sample.
    public var last: Sample?

    /// An empty summary of a `windowSeconds` window.
    public init(windowSeconds: Double) {
        self.windowSeconds = windowSeconds
    }
}
