import Foundation
import Testing

/// BlueZ's own client, unmodified, against blesim.
@Suite("bluetoothctl against blesim", .serialized)
struct BluetoothctlTests {
    static let bluetoothctl = "/usr/bin/bluetoothctl"

    /// Runs bluetoothctl with the private bus as its system bus; returns its output without colours.
    func run(_ bus: PrivateBus, _ arguments: [String]) throws -> String {
        let child = try ChildProcess(
            Self.bluetoothctl, arguments, environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        let result = child.finish()
        let text = result.output + (result.status == 0 ? "" : "\n[exit \(result.status)] " + result.errors)
        return Self.withoutColours(text)
    }

    /// `text` without ANSI colour sequences (ESC [ ... m) and readline's prompt markers.
    static func withoutColours(_ text: String) -> String {
        var result = ""
        var escaping = false
        for scalar in text.unicodeScalars {
            if escaping {
                if scalar == "m" { escaping = false }
                continue
            }
            switch scalar {
            case "\u{1B}": escaping = true
            case "\u{01}", "\u{02}": continue
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    @Test(
        "`bluetoothctl scan on` discovers the scenario's devices, and `devices` lists them",
        .enabled(if: FileManager.default.isExecutableFile(atPath: bluetoothctl)))
    func scan() throws {
        let bus = try PrivateBus()
        let sim = try Blesim(bus: bus, arguments: ["--scenario", Air.scenario])
        let scan = try run(bus, ["--timeout", "5", "scan", "on"])
        #expect(scan.contains("Discovery started"), "\(scan)")
        #expect(scan.contains("[NEW] Device C0:00:00:00:00:0A Near-A"), "\(scan)")
        #expect(scan.contains("[NEW] Device C0:00:00:00:00:0B Far-B"), "\(scan)")
        #expect(scan.contains("[NEW] Device C0:00:00:00:00:0C HRM-C"), "\(scan)")
        let devices = try run(bus, ["devices"])
        #expect(devices.contains("Device C0:00:00:00:00:0A Near-A"), "\(devices)")
        #expect(devices.contains("Device C0:00:00:00:00:0C HRM-C"), "\(devices)")
        let info = try run(bus, ["info", "C0:00:00:00:00:0C"])
        #expect(info.contains("Name: HRM-C"), "\(info)")
        #expect(info.contains("Heart Rate"), "\(info)")
        _ = sim
    }
}
