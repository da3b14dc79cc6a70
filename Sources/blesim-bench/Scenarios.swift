/// The generated scenarios the benchmark runs blesim with.
enum Scenarios {
    /// `count` advertisers every 20 ms (as Tests/BlesimTests/LoadMeasurement.swift, so figures compare), from one
    /// template with `repeat` (docs/blesim.md, "Load: repeat").
    static func advertisers(_ count: Int) -> String {
        """
        {"adapters": 1, "devices": [
          {"address": "C0:00:00:00:00:00", "addressType": "random", "intervalMs": 20,
           "advertising": {"name": "D{n}", "serviceUUIDs": ["180D"], "manufacturerData": [{"company": 76, "data": "0102"}]},
           "rssi": {"distance": 2, "noise": 3}, "repeat": {"count": \(count)}}]}
        """
    }

    /// `count` connectable devices, each with one notify characteristic (path `service000a/char000b`) whose value
    /// changes every `everyMs` (1 ms is the scenario format's floor: at most 1,000 notifications/s each).
    static func notifiers(_ count: Int, everyMs: Int) -> String {
        let devices = (0..<count).map { index in
            """
            {"address": "D0:00:00:00:\(hex(index >> 8)):\(hex(index & 0xFF))", "addressType": "random", "intervalMs": 50,
             "advertising": {"name": "N\(index)", "serviceUUIDs": ["180D"]}, "rssi": {"distance": 1},
             "gatt": {"services": [{"uuid": "180D", "characteristics": [{"uuid": "2A37", "flags": ["notify"],
               "value": "0600", "behaviour": {"counter": {"start": 0, "step": 1, "format": "uint16"}, "everyMs": \(everyMs)}}]}]}}
            """
        }
        return #"{"adapters": 1, "devices": [\#(devices.joined(separator: ","))]}"#
    }

    /// The Device1 path of notifier `index`.
    static func notifierPath(_ index: Int) -> String {
        "/org/bluez/hci0/dev_D0_00_00_00_\(hex(index >> 8))_\(hex(index & 0xFF))"
    }

    static func hex(_ value: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return text.count == 1 ? "0" + text : text
    }
}
