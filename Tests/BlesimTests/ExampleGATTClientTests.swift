import BLETesting
import Foundation
import Testing

/// BlueZ's own example-gatt-client (Debian's bluez-test-scripts), unmodified, against blesim.
@Suite("BlueZ's example-gatt-client against blesim", .serialized)
struct ExampleGATTClientTests {
    static let script = "/usr/share/doc/bluez-test-scripts/examples/example-gatt-client"
    /// The system Python, which has python3-dbus and python3-gi.
    static let python = "/usr/bin/python3"

    static var available: Bool {
        requiredOrPresent(script) && requiredOrPresent(python)
    }

    @Test(
        "example-gatt-client reads Body Sensor Location and receives Heart Rate Measurement notifications",
        .enabled(if: available))
    func heartRate() async throws {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(
            address: bus.address, scenario: nil, options: ["--scenario", Air.scenario])
        let client = try await BlueZClient.connect(bus)
        try await client.connectHRM()
        let example = try await TestProcess(
            Self.python, ["-u", Self.script], environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        #expect(
            await example.waitForLine(within: .seconds(60), where: { $0.contains("Heart Rate Service found") }) != nil)
        #expect(
            await example.waitForLine(within: .seconds(60), where: { $0 == "Body sensor location value: Chest" }) != nil
        )
        #expect(
            await example.waitForLine(within: .seconds(60), where: { $0 == "HR Measurement notifications enabled" })
                != nil)
        for _ in 0..<2 {
            #expect(await example.waitForLine(within: .seconds(60), where: { $0 == "New HR Measurement" }) != nil)
            let rate = await example.waitForLine(within: .seconds(60), where: { $0.hasPrefix("\tHR: ") })
            #expect(["\tHR: 72", "\tHR: 74", "\tHR: 76", "\tHR: 78"].contains(rate ?? ""), "\(example.outputText)")
        }
        example.signal(SIGTERM)
        _ = sim
    }
}
