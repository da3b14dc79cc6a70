import BLETesting
import DBus
import Foundation
import Testing

/// blesim's virtual central on org.blesim.Control1 against BlueZ's unmodified example-gatt-server.
@Suite("Virtual central on Control1 against BlueZ's example-gatt-server", .serialized)
struct VirtualCentralTests {
    static let hci0 = DBusValue.string("hci0")

    static func start() async throws -> (PrivateBus, BlesimProcess, BlueZClient, TestProcess) {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(
            address: bus.address, scenario: nil, options: ["--scenario", Air.scenario, "--adapters", "2"])
        let client = try await BlueZClient.connect(bus)
        let server = try await TestProcess(
            PeripheralRoleTests.python, ["-u", PeripheralRoleTests.examples + "example-gatt-server"],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        guard await server.waitForLine(within: .seconds(60), where: { $0 == "GATT application registered" }) != nil
        else {
            throw HarnessError("example-gatt-server: \(server.outputText)")
        }
        return (bus, sim, client, server)
    }

    func control(_ client: BlueZClient, _ member: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
        try await client.connection.call(
            destination: "org.bluez", path: ObjectPath("/org/blesim"), interface: "org.blesim.Control1",
            member: member, arguments: arguments
        ).arguments()
    }

    @Test(
        "CentralRead before CentralConnect is Failed \"Not connected\"; after it, reads reach the application's ReadValue",
        .enabled(if: PeripheralRoleTests.available))
    func readThroughVirtualCentral() async throws {
        let (bus, sim, client, server) = try await Self.start()
        let early = await client.errorName {
            _ = try await control(client, "CentralRead", [Self.hci0, .string("2a19")])
        }
        #expect(early == "org.bluez.Error.Failed")
        _ = try await control(client, "CentralConnect", [Self.hci0])
        let reply = try await control(client, "CentralRead", [Self.hci0, .string("2a19")])
        #expect(reply.first?.bytesValue?.count == 1)
        #expect(await server.waitForLine(within: .seconds(60), where: { $0.hasPrefix("Battery Level read: ") }) != nil)
        let missing = await client.errorName {
            _ = try await control(client, "CentralRead", [Self.hci0, .string("2a00")])
        }
        #expect(missing == "org.bluez.Error.DoesNotExist")
        _ = (sim, bus)
    }

    @Test(
        "CentralWrite reaches the application's WriteValue and its errors come back as a remote client sees them",
        .enabled(if: PeripheralRoleTests.available))
    func writeThroughVirtualCentral() async throws {
        let (bus, sim, client, server) = try await Self.start()
        _ = try await control(client, "CentralConnect", [Self.hci0])
        let point = DBusValue.string("00002a39-0000-1000-8000-00805f9b34fb")
        do {
            _ = try await control(client, "CentralWrite", [Self.hci0, point, .bytes([2]), .boolean(true)])
            Issue.record("a refused write succeeded")
        } catch let error as DBusError {
            #expect(error.name.rawValue == "org.bluez.Error.Failed")
            #expect(error.message == "Operation failed with ATT error: 0x80")
        }
        _ = try await control(client, "CentralWrite", [Self.hci0, point, .bytes([1]), .boolean(true)])
        #expect(await server.waitForLine(within: .seconds(60), where: { $0 == "Energy Expended field reset!" }) != nil)
        _ = (sim, bus)
    }

    @Test(
        "CentralSubscribe calls the application's StartNotify and its Value changes arrive as Notification signals on /org/blesim",
        .enabled(if: PeripheralRoleTests.available))
    func subscribeThroughVirtualCentral() async throws {
        let (bus, sim, client, server) = try await Self.start()
        _ = try await control(client, "CentralConnect", [Self.hci0])
        _ = try await control(client, "CentralSubscribe", [Self.hci0, .string("2a37"), .boolean(true)])
        let notified = await client.log.wait(until: { messages in
            messages.filter { $0.member == "Notification" && $0.path?.rawValue == "/org/blesim" }.count >= 2
        })
        #expect(notified)
        let first = client.log.messages.first { $0.member == "Notification" }
        let arguments = try first?.arguments() ?? []
        #expect(arguments.first == .string("/org/bluez/hci0"))
        #expect(arguments.dropFirst().first == .string("00002a37-0000-1000-8000-00805f9b34fb"))
        _ = try await control(client, "CentralSubscribe", [Self.hci0, .string("2a37"), .boolean(false)])
        #expect(
            await server.waitForLine(within: .seconds(60), where: { $0 == "Update HR Measurement Simulation" }) != nil)
        _ = (sim, bus)
    }

    @Test(
        "a scenario's central connects once the application is registered, reads, writes and subscribes at its times",
        .enabled(if: PeripheralRoleTests.available))
    func scenarioCentral() async throws {
        let path = FileManager.default.temporaryDirectory.path + "/blesim-centrals-\(getpid()).json"
        try Data(
            #"""
            { "adapters": 2, "centrals": [ { "adapter": 0, "after": "application", "steps": [
                { "at": 0, "action": "connect" },
                { "at": 0.05, "action": "read", "uuid": "2A19" },
                { "at": 0.1, "action": "write", "uuid": "2A39", "value": "01" },
                { "at": 0.15, "action": "subscribe", "uuid": "2A37" } ] } ] }
            """#.utf8
        ).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(address: bus.address, scenario: nil, options: ["--scenario", path])
        let client = try await BlueZClient.connect(bus)
        // Nothing to connect to yet: the central waits for the application.
        let server = try await TestProcess(
            PeripheralRoleTests.python, ["-u", PeripheralRoleTests.examples + "example-gatt-server"],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        #expect(await server.waitForLine(within: .seconds(60), where: { $0 == "GATT application registered" }) != nil)
        #expect(await server.waitForLine(within: .seconds(60), where: { $0.hasPrefix("Battery Level read: ") }) != nil)
        #expect(await server.waitForLine(within: .seconds(60), where: { $0 == "Energy Expended field reset!" }) != nil)
        #expect(
            await server.waitForLine(within: .seconds(60), where: { $0 == "Update HR Measurement Simulation" }) != nil)
        #expect(
            await client.log.wait(until: { messages in
                messages.contains { $0.member == "Notification" && $0.path?.rawValue == "/org/blesim" }
            }), "the subscribed central's notifications arrive as Control1 signals")
        #expect(
            try await client.property("/org/bluez/hci0/dev_C0_DE_00_00_00_01", "org.bluez.Device1", "Connected")
                == .boolean(true))
        _ = sim
    }
}
