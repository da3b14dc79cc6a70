/// Sensor readings waiting for the broker, coalesced per sensor: the newest
/// reading replaces one not yet sent (and is counted as merged). Memory is
/// bounded by the number of sensors (at most ``maxSensors``; readings of
/// sensors past that are dropped and counted).
struct ReadingFeed: Sendable {
    static let maxSensors = 1024

    struct Reading: Sendable, Hashable {
        var sensor: String
        var value: Double
        var time: Double
    }

    private var waiting: [String: Reading] = [:]
    private var order = IndexQueue<String>()
    /// Readings replaced by a newer one before they were sent.
    private(set) var merged: Int64 = 0
    /// Readings dropped because too many sensors were waiting.
    private(set) var dropped: Int64 = 0

    /// Sensors with a reading waiting.
    var count: Int { waiting.count }

    mutating func add(_ reading: Reading) {
        if waiting[reading.sensor] != nil {
            merged += 1
        } else if waiting.count >= Self.maxSensors {
            dropped += 1
            return
        } else {
            order.push(reading.sensor)
        }
        waiting[reading.sensor] = reading
    }

    /// The oldest waiting sensor's newest reading, removed.
    mutating func pop() -> Reading? {
        while let sensor = order.pop() {
            if let reading = waiting.removeValue(forKey: sensor) { return reading }
        }
        return nil
    }
}
