import BLETesting
import DBus
import Foundation
import Testing

/// A measurement, not a test (it asserts nothing): how many advertisement reports per second
/// reach a client through blesim. Opt-in: `BLESIM_LOAD=N` devices advertising every 20 ms with
/// a DuplicateData filter (so every advertisement is a PropertiesChanged), for 10 s; point
/// `BLESIM` at a release build to measure blesim rather than the debug build.
@Test(
    "measure: advertisement reports per second through blesim",
    .enabled(if: ProcessInfo.processInfo.environment["BLESIM_LOAD"] != nil))
func measureReportRate() async throws {
    let count = Int(ProcessInfo.processInfo.environment["BLESIM_LOAD"] ?? "") ?? 500
    let devices = (0..<count).map { index in
        """
        {"address": "C0:00:00:00:\(hex(index >> 8)):\(hex(index & 0xFF))", "addressType": "random", "intervalMs": 20,
         "advertising": {"name": "D\(index)", "serviceUUIDs": ["180D"], "manufacturerData": [{"company": 76, "data": "0102"}]},
         "rssi": {"distance": 2, "noise": 3}}
        """
    }
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("blesim-load-\(count).json").path
    try #"{"adapters": 1, "devices": [\#(devices.joined(separator: ","))]}"#.write(
        toFile: path, atomically: true, encoding: .utf8)
    let bus = try await PrivateBus.start()
    let sim = try await BlesimProcess.start(address: bus.address, scenario: nil, options: ["--scenario", path])
    let connection = try await DBusConnection.connect(address: bus.address)
    let stream = try await connection.signals(MatchRule(sender: "org.bluez"), buffering: .newest(1_000_000))
    let adapter = try ObjectPath("/org/bluez/hci0")
    let filter = DBusValue.dictionary(
        key: .string, value: .variant, [(key: .string("DuplicateData"), value: .variant(.boolean(true)))])
    _ = try await connection.call(
        destination: "org.bluez", path: adapter, interface: "org.bluez.Adapter1", member: "SetDiscoveryFilter",
        arguments: [filter])
    _ = try await connection.call(
        destination: "org.bluez", path: adapter, interface: "org.bluez.Adapter1", member: "StartDiscovery")
    let counter = Task { () -> Int in
        var changed = 0
        for await message in stream where message.member == "PropertiesChanged" { changed += 1 }
        return changed
    }
    try await Task.sleep(for: .seconds(10))
    stream.finish()
    let changed = await counter.value
    print(
        "blesim load: \(count) devices every 20 ms (\(count * 50) advertisements/s offered): "
            + "\(changed / 10) reports/s received, \(stream.droppedCount) dropped by the client")
    _ = sim
}

private func hex(_ value: Int) -> String {
    let text = String(value, radix: 16, uppercase: true)
    return text.count == 1 ? "0" + text : text
}
