import BLETesting
import DBus
import Foundation
import Testing

/// BlueZ's own example-gatt-server and example-advertisement (Debian's bluez-test-scripts,
/// unmodified) registered on blesim's hci0, used from hci1 by a client and by example-gatt-client.
@Suite("Peripheral role: BlueZ's example GATT server and advertisement on blesim", .serialized)
struct PeripheralRoleTests {
    static let examples = "/usr/share/doc/bluez-test-scripts/examples/"
    static let python = "/usr/bin/python3"

    static var available: Bool {
        FileManager.default.fileExists(atPath: examples + "example-gatt-server")
            && FileManager.default.fileExists(atPath: examples + "example-advertisement")
            && FileManager.default.isExecutableFile(atPath: python)
    }

    /// blesim with two adapters, the example server and advertisement on hci0, and a client.
    struct Bench {
        let bus: PrivateBus
        let sim: BlesimProcess
        let client: BlueZClient
        let server: TestProcess
        let advertiser: TestProcess
        /// hci0 as a Device1 under hci1.
        let peripheral: String

        static func start() async throws -> Bench {
            let bus = try await PrivateBus.start()
            let sim = try await BlesimProcess.start(
                address: bus.address, scenario: nil, options: ["--scenario", Air.scenario, "--adapters", "2"])
            let client = try await BlueZClient.connect(bus)
            let environment = ["DBUS_SYSTEM_BUS_ADDRESS": bus.address]
            let server = try await TestProcess(
                python, ["-u", examples + "example-gatt-server"], environment: environment)
            guard await server.waitForLine(within: .seconds(60), where: { $0 == "GATT application registered" }) != nil
            else {
                throw HarnessError("example-gatt-server: \(server.outputText)")
            }
            let advertiser = try await TestProcess(
                python, ["-u", examples + "example-advertisement"], environment: environment)
            guard await advertiser.waitForLine(within: .seconds(60), where: { $0 == "Advertisement registered" }) != nil
            else {
                throw HarnessError("example-advertisement: \(advertiser.outputText)")
            }
            guard
                case .string(let address)? = try await client.property(
                    "/org/bluez/hci0", "org.bluez.Adapter1", "Address")
            else { throw HarnessError("hci0 has no Address") }
            let peripheral = "/org/bluez/hci1/dev_" + address.replacingOccurrences(of: ":", with: "_")
            return Bench(
                bus: bus, sim: sim, client: client, server: server, advertiser: advertiser, peripheral: peripheral)
        }

        /// hci1 discovers hci0's advertisement and connects; returns once ServicesResolved.
        func connect() async throws {
            try await client.adapter("StartDiscovery", path: "/org/bluez/hci1")
            let peripheral = self.peripheral
            guard await client.log.wait(until: { Signals.addedDevices($0)[peripheral] != nil }) else {
                throw HarnessError("hci1 did not find hci0's advertisement")
            }
            _ = try await client.call(peripheral, "org.bluez.Device1", "Connect")
            guard
                await client.log.wait(until: {
                    BlueZClient.changed($0, peripheral, "ServicesResolved", .boolean(true))
                })
            else { throw HarnessError("services were not resolved") }
        }

        /// The remote characteristic with 16-bit UUID `uuid16` (for example "2a19") under hci1.
        func characteristic(_ uuid16: String) async throws -> String {
            let objects = try await client.managedObjects()
            let uuid = "0000\(uuid16)-0000-1000-8000-00805f9b34fb"
            guard
                let path = objects.first(where: {
                    $0.key.hasPrefix(peripheral + "/") && $0.value[BlueZClient.characteristic]?["UUID"] == .string(uuid)
                })?.key
            else { throw HarnessError("no characteristic \(uuid16) under \(peripheral)") }
            return path
        }
    }

    @Test("hci1 finds hci0's advertisement with the example's name, UUIDs and data", .enabled(if: available))
    func advertisementIsHeard() async throws {
        let bench = try await Bench.start()
        try await bench.client.adapter("StartDiscovery", path: "/org/bluez/hci1")
        let peripheral = bench.peripheral
        #expect(await bench.client.log.wait(until: { Signals.addedDevices($0)[peripheral] != nil }))
        let device = Signals.addedDevices(bench.client.log.messages)[peripheral] ?? [:]
        #expect(device["Name"] == .string("TestAdvertisement"))
        let uuids = device["UUIDs"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(uuids.contains("0000180d-0000-1000-8000-00805f9b34fb"))
        #expect(uuids.contains("0000180f-0000-1000-8000-00805f9b34fb"))
        #expect(device["ManufacturerData"] != nil)
        #expect(device["ServiceData"] != nil)
        #expect(
            try await bench.client.property("/org/bluez/hci0", "org.bluez.LEAdvertisingManager1", "ActiveInstances")
                == .byte(1))
        // hci0 does not hear itself.
        try await bench.client.adapter("StartDiscovery", path: "/org/bluez/hci0")
        #expect(
            try await bench.client.managedObjects()["/org/bluez/hci0/" + peripheral.split(separator: "/").last!] == nil)
        _ = bench.sim
    }

    @Test(
        "a central on hci1 reads Battery Level from example-gatt-server through blesim, which calls the application's ReadValue",
        .enabled(if: available))
    func readRelayedToApplication() async throws {
        let bench = try await Bench.start()
        try await bench.connect()
        let battery = try await bench.characteristic("2a19")
        let value = try await bench.client.read(battery)
        #expect(value.count == 1 && value[0] <= 100)
        #expect(
            await bench.server.waitForLine(within: .seconds(60), where: { $0.hasPrefix("Battery Level read: ") }) != nil
        )
        _ = bench.sim
    }

    @Test(
        "the application's D-Bus errors reach the remote client as bluetoothd maps them through ATT",
        .enabled(if: available))
    func errorsMapThroughATT() async throws {
        let bench = try await Bench.start()
        try await bench.connect()
        let controlPoint = try await bench.characteristic("2a39")
        // InvalidValueLength -> ATT 0x0D -> InvalidArguments "Invalid Length".
        let short = await bench.client.errorName { try await bench.client.write(controlPoint, [1, 2]) }
        #expect(short == "org.bluez.Error.InvalidArguments")
        // Failed "0x80" -> ATT 0x80 -> Failed "Operation failed with ATT error: 0x80".
        do {
            try await bench.client.write(controlPoint, [2])
            Issue.record("a write the application refused succeeded")
        } catch let error as DBusError {
            #expect(error.name.rawValue == "org.bluez.Error.Failed")
            #expect(error.message == "Operation failed with ATT error: 0x80")
        }
        // Accepted: the application saw the value.
        try await bench.client.write(controlPoint, [1])
        #expect(
            await bench.server.waitForLine(within: .seconds(60), where: { $0 == "Energy Expended field reset!" }) != nil
        )
        _ = bench.sim
    }

    @Test(
        "BlueZ's example-gatt-client on hci1 reads Body Sensor Location and receives Heart Rate Measurement notifications from example-gatt-server on hci0",
        .enabled(if: available))
    func exampleClientAgainstExampleServer() async throws {
        let bench = try await Bench.start()
        try await bench.connect()
        let example = try await TestProcess(
            Self.python, ["-u", Self.examples + "example-gatt-client"],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": bench.bus.address])
        #expect(
            await example.waitForLine(within: .seconds(60), where: { $0.contains("Heart Rate Service found") }) != nil)
        // The read's and StartNotify's replies come in either order.
        var wanted: Set<String> = ["Body sensor location value: Chest", "HR Measurement notifications enabled"]
        var measurements = 0
        while !wanted.isEmpty || measurements < 2,
            let line = await example.waitForLine(within: .seconds(60), where: { _ in true })
        {
            wanted.remove(line)
            if line == "New HR Measurement" { measurements += 1 }
        }
        #expect(wanted.isEmpty && measurements >= 2, "\(example.outputText)\nserver: \(bench.server.outputText)")
        example.signal(SIGTERM)
        _ = bench.sim
    }

    @Test(
        "when the applications' owners leave the bus, the link to hci0 drops and its advertisement leaves the air",
        .enabled(if: available))
    func ownerLeavingRemovesApplicationAndAdvertisement() async throws {
        let bench = try await Bench.start()
        try await bench.connect()
        let peripheral = bench.peripheral
        bench.server.signal(SIGTERM)
        #expect(
            await bench.client.log.wait(until: { BlueZClient.changed($0, peripheral, "Connected", .boolean(false)) }))
        bench.advertiser.signal(SIGTERM)
        #expect(
            await bench.client.log.wait(until: {
                BlueZClient.changed($0, "/org/bluez/hci0", "ActiveInstances", .byte(0))
            }))
        let error = await bench.client.errorName {
            _ = try await bench.client.call(peripheral, "org.bluez.Device1", "Connect")
        }
        #expect(error == "org.bluez.Error.Failed")
        _ = bench.sim
    }
}
