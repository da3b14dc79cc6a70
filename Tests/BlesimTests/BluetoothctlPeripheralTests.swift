import BLETesting
import DBus
import Foundation
import Testing

/// Unmodified BlueZ clients across adapters: BlueZ's example-gatt-server and
/// example-advertisement on hci0, and `bluetoothctl` (Debian's, unmodified) on hci1 scanning,
/// connecting, listing the attributes, reading Battery Level and receiving Heart Rate Measurement
/// notifications from the application through blesim.
@Suite("bluetoothctl on hci1 against BlueZ's example GATT server on hci0", .serialized)
struct BluetoothctlPeripheralTests {
    static var available: Bool {
        PeripheralRoleTests.available && requiredOrPresent(BluetoothctlTests.bluetoothctl)
    }

    @Test(
        "bluetoothctl selects hci1, finds hci0's advertisement, connects, lists attributes, reads Battery Level and gets Heart Rate notifications",
        .enabled(if: available))
    func acrossAdapters() async throws {
        let bench = try await PeripheralRoleTests.Bench.start()
        guard
            case .string(let hci0)? = try await bench.client.property(
                "/org/bluez/hci0", "org.bluez.Adapter1", "Address"),
            case .string(let hci1)? = try await bench.client.property(
                "/org/bluez/hci1", "org.bluez.Adapter1", "Address")
        else { throw HarnessError("adapters without Address") }
        let shell = try await TestProcess(
            BluetoothctlTests.bluetoothctl, [], environment: ["DBUS_SYSTEM_BUS_ADDRESS": bench.bus.address],
            input: true)
        func sees(_ wanted: @escaping (String) -> Bool) async throws -> Bool {
            await shell.waitForLine(within: .seconds(60), where: { wanted(BluetoothctlTests.withoutColours($0)) })
                != nil
        }
        func sees(_ text: String) async throws -> Bool { try await sees { $0.contains(text) } }
        shell.send("select " + hci1)
        shell.send("scan on")
        #expect(try await sees("[NEW] Device \(hci0) TestAdvertisement"), "\(shell.outputText)")
        shell.send("scan off")
        shell.send("connect " + hci0)
        #expect(try await sees("Connection successful"), "\(shell.outputText)")
        #expect(try await sees("ServicesResolved: yes"), "\(shell.outputText)")
        shell.send("menu gatt")
        shell.send("list-attributes " + hci0)
        #expect(try await sees("00002a19-0000-1000-8000-00805f9b34fb"), "\(shell.outputText)")
        shell.send("select-attribute 00002a19-0000-1000-8000-00805f9b34fb")
        shell.send("read")
        // The read reached the application (it prints each one) and its value came back.
        #expect(
            await bench.server.waitForLine(within: .seconds(60), where: { $0.hasPrefix("Battery Level read: ") })
                != nil,
            "\(bench.server.outputText)")
        #expect(try await sees("Attempting to read"), "\(shell.outputText)")
        shell.send("select-attribute 00002a37-0000-1000-8000-00805f9b34fb")
        shell.send("notify on")
        #expect(try await sees("Notify started"), "\(shell.outputText)")
        // example-gatt-server notifies 06 (0e with Energy Expended) and a rate of 90...130 each second.
        for _ in 0..<2 {
            #expect(try await sees { $0.contains("  06 ") || $0.contains("  0e ") }, "\(shell.outputText)")
        }
        shell.send("quit")
        shell.closeInput()
        _ = await shell.finish()
        _ = bench.sim
    }
}
