/// The blesim worlds blebench measures in (docs/blesim.md, "Scenario files").
enum Scenarios {
    /// BLE's shortest advertising interval (milliseconds), the shortest blesim's scenarios take.
    static let shortestAdvertisingIntervalMs = 20.0

    /// The mean of the random advDelay (0 to 10 ms) that BLE, and blesim, add to every advertising interval.
    static let meanAdvertisingDelayMs = 5.0

    /// The interval at which each of `devices` advertisers advertises so that together, with the advDelay added
    /// to each event, they offer `rate` reports a second; an error when that is shorter than BLE allows.
    static func advertisingIntervalMs(devices: Int, rate: Int) throws -> Double {
        let intervalMs = Double(devices) * 1000 / Double(rate) - meanAdvertisingDelayMs
        guard intervalMs >= shortestAdvertisingIntervalMs else {
            let most = Int(Double(devices) * 1000 / (shortestAdvertisingIntervalMs + meanAdvertisingDelayMs))
            throw BenchFailure(
                "\(devices) advertisers cannot offer \(rate) reports a second: each would advertise every "
                    + "\(fixed(intervalMs, 1)) ms, below BLE's \(Int(shortestAdvertisingIntervalMs)) ms "
                    + "(at most \(most) a second)")
        }
        return intervalMs
    }

    /// `count` advertisers every `intervalMs` (one template with `repeat`), heard by one adapter.
    static func advertisers(_ count: Int, intervalMs: Double) -> String {
        """
        {"adapters": 1, "temporaryTimeout": 180, "devices": [
          {"address": "C0:00:00:00:00:00", "addressType": "random", "intervalMs": \(intervalMs),
           "advertising": {"name": "D{n}", "serviceUUIDs": ["180D"], "manufacturerData": [{"company": 76, "data": "0102"}]},
           "rssi": {"distance": 2, "noise": 3}, "repeat": {"count": \(count)}}]}
        """
    }

    /// Two adapters and nothing else: a peripheral on hci0, a central on hci1.
    static let twoAdapters = #"{"adapters": 2, "devices": []}"#
}
