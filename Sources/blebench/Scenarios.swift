/// The blesim worlds blebench measures in (docs/blesim.md, "Scenario files").
enum Scenarios {
    /// `count` advertisers every `intervalMs` (one template with `repeat`), heard by one adapter.
    static func advertisers(_ count: Int, intervalMs: Int) -> String {
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
