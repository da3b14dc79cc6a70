import BLETesting
import Foundation
import Testing

/// BlueZ's own client, unmodified, against blesim.
@Suite("bluetoothctl against blesim", .serialized)
struct BluetoothctlTests {
    static let bluetoothctl = "/usr/bin/bluetoothctl"

    /// Runs bluetoothctl with the private bus as its system bus; returns its output without colours.
    func run(_ bus: PrivateBus, _ arguments: [String]) async throws -> String {
        let child = try await TestProcess(
            Self.bluetoothctl, arguments, environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        let result = await child.finish()
        let text = result.output + (result.status == 0 ? "" : "\n[exit \(result.status)] " + result.errors)
        return Self.withoutColours(text)
    }

    /// `text` without ANSI control sequences (ESC [ ... final letter: colours, line erase) and
    /// readline's prompt markers.
    static func withoutColours(_ text: String) -> String {
        var result = ""
        var escaping = false
        for scalar in text.unicodeScalars {
            if escaping {
                if scalar.properties.isAlphabetic { escaping = false }
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
        .enabled(if: requiredOrPresent(bluetoothctl)))
    func scan() async throws {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(
            address: bus.address, scenario: nil, options: ["--scenario", Air.scenario])
        let scan = try await run(bus, ["--timeout", "5", "scan", "on"])
        #expect(scan.contains("Discovery started"), "\(scan)")
        #expect(scan.contains("[NEW] Device C0:00:00:00:00:0A Near-A"), "\(scan)")
        #expect(scan.contains("[NEW] Device C0:00:00:00:00:0B Far-B"), "\(scan)")
        #expect(scan.contains("[NEW] Device C0:00:00:00:00:0C HRM-C"), "\(scan)")
        let devices = try await run(bus, ["devices"])
        #expect(devices.contains("Device C0:00:00:00:00:0A Near-A"), "\(devices)")
        #expect(devices.contains("Device C0:00:00:00:00:0C HRM-C"), "\(devices)")
        let info = try await run(bus, ["info", "C0:00:00:00:00:0C"])
        #expect(info.contains("Name: HRM-C"), "\(info)")
        #expect(info.contains("Heart Rate"), "\(info)")
        _ = sim
    }

    @Test(
        "bluetoothctl connects, lists the GATT attributes, reads Battery Level and receives Heart Rate notifications",
        .enabled(if: requiredOrPresent(bluetoothctl)))
    func gatt() async throws {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(
            address: bus.address, scenario: nil, options: ["--scenario", Air.scenario])
        let scan = try await run(bus, ["--timeout", "3", "scan", "on"])
        #expect(scan.contains("[NEW] Device C0:00:00:00:00:0C HRM-C"), "\(scan)")
        let shell = try await TestProcess(
            Self.bluetoothctl, [], environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address], input: true)
        func sees(_ text: String) async throws -> Bool {
            await shell.waitForLine(within: .seconds(60), where: { Self.withoutColours($0).contains(text) }) != nil
        }
        shell.send("connect C0:00:00:00:00:0C")
        #expect(try await sees("Connection successful"), "\(shell.outputText)")
        #expect(try await sees("ServicesResolved: yes"), "\(shell.outputText)")
        shell.send("menu gatt")
        shell.send("list-attributes C0:00:00:00:00:0C")
        #expect(try await sees(HRM.batteryLevel), "\(shell.outputText)")
        shell.send("select-attribute " + HRM.batteryLevel)
        shell.send("read")
        #expect(try await sees("  64 "), "\(shell.outputText)")
        shell.send("select-attribute 00002a37-0000-1000-8000-00805f9b34fb")
        shell.send("notify on")
        #expect(try await sees("Notify started"), "\(shell.outputText)")
        for _ in 0..<3 { #expect(try await sees("  06 4"), "\(shell.outputText)") }
        shell.send("quit")
        shell.closeInput()
        _ = await shell.finish()
        _ = sim
    }
}
