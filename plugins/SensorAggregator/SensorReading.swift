/// One reading of one sensor.
public struct SensorReading: Sendable, Hashable {
    /// The sensor's id (``SensorConfig/id``).
    public var sensor: String
    /// The value in the sensor's unit.
    public var value: Double
    /// When it was taken, in seconds since the Unix epoch.
    public var time: Double

    /// A reading of `value` from `sensor` at `time`.
    public init(sensor: String, value: Double, time: Double) {
        self.sensor = sensor
        self.value = value
        self.time = time
    }
}

/// One value at one time inside a window.
public struct Sample: Sendable, Hashable {
    /// Seconds since the Unix epoch.
    public var time: Double
    /// The value.
    public var value: Double

    /// `value` at `time`.
    public init(time: Double, value: Double) {
        self.time = time
        self.value = value
    }
}
