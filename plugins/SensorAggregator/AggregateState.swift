/// Every sensor's rolling window: the state the plugin persists and serves.
/// One owner (the plugin's actor) mutates it; everything here is pure.
public struct AggregateState: Sendable, Hashable {
    /// The sensor ids, in config order (their index is their summary id).
    public let sensorIDs: [String]
    /// The windows by sensor id.
    public private(set) var windows: [String: RollingWindow]
    /// The values each sensor may hold (its kind's ``SensorKind/physicalRange``);
    /// a sensor without one takes any value a float32 holds.
    public let ranges: [String: ClosedRange<Double>]

    /// Empty windows of `windowSeconds` for `sensorIDs`, each holding at most
    /// `capacity` samples of a value within its sensor's range in `ranges`.
    public init(
        sensorIDs: [String], windowSeconds: Double, capacity: Int, ranges: [String: ClosedRange<Double>] = [:]
    ) {
        self.sensorIDs = sensorIDs
        self.ranges = ranges
        var windows: [String: RollingWindow] = [:]
        for id in sensorIDs { windows[id] = RollingWindow(length: windowSeconds, capacity: capacity) }
        self.windows = windows
    }

    /// Adds `reading` to its sensor's window.
    public mutating func record(_ reading: SensorReading, now: Double) -> RecordOutcome {
        guard windows[reading.sensor] != nil else { return .unknownSensor }
        guard (ranges[reading.sensor] ?? SensorKind.generic.physicalRange).contains(reading.value) else {
            return .outOfRange
        }
        let kept = windows[reading.sensor]?.add(Sample(time: reading.time, value: reading.value), now: now) ?? false
        return kept ? .recorded : .outsideWindow
    }

    /// Drops expired samples from every window.
    public mutating func expire(now: Double) {
        for id in sensorIDs { windows[id]?.expire(now: now) }
    }

    /// Sets every window's length (the Config characteristic).
    public mutating func setWindowLength(_ seconds: Double, now: Double) {
        for id in sensorIDs { windows[id]?.setLength(seconds, now: now) }
    }

    /// Each sensor's summary at `now`, in config order.
    public func summaries(now: Double) -> [(sensor: String, summary: WindowSummary)] {
        sensorIDs.compactMap { id in windows[id].map { (id, $0.summary(now: now)) } }
    }

    /// The summary of `sensor` at `now`, or nil for an unknown sensor.
    public func summary(of sensor: String, now: Double) -> WindowSummary? {
        windows[sensor]?.summary(now: now)
    }
}

/// What became of a recorded reading.
public enum RecordOutcome: Sendable, Hashable {
    /// Added to its window.
    case recorded
    /// No sensor has that id.
    case unknownSensor
    /// Older than the window (or not finite): nothing kept.
    case outsideWindow
    /// Outside the sensor's physical range (or not finite): nothing kept.
    case outOfRange
}
