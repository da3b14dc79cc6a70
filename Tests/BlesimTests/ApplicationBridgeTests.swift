import BLETesting
import DBus
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A GATT application on hci0 (Fixtures/bridge-app.py: AcquireNotify / AcquireWrite offered,
/// an indicate-only characteristic, a Battery Service) used from hci1 by a D-Bus client: what
/// bluetoothd's gatt-database.c calls on the application, the central's Device1 on hci0, and
/// the battery plugin's Battery1 on hci1.
@Suite("Peripheral role: a local application bridged to a central on another adapter", .serialized)
struct ApplicationBridgeTests {
    static let app = repositoryRoot + "/Tests/BlesimTests/Fixtures/bridge-app.py"
    static let python = "/usr/bin/python3"
    static func uuid(_ n: Int) -> String { "6a3e000\(n)-1b2c-4d5e-8f90-a1b2c3d4e5f6" }

    static var available: Bool { requiredOrPresent(python) }

    struct Bench {
        let bus: PrivateBus
        let sim: BlesimProcess
        let client: BlueZClient
        let app: TestProcess
        /// hci0 as a Device1 under hci1.
        let peripheral: String
        /// hci1 as a Device1 under hci0 (the central, as hci0's bluetoothd shows it).
        let central: String

        static func start() async throws -> Bench {
            let bus = try await PrivateBus.start()
            let sim = try await BlesimProcess.start(
                address: bus.address, scenario: nil, options: ["--scenario", Air.scenario, "--adapters", "2"])
            let client = try await BlueZClient.connect(bus)
            let app = try await TestProcess(
                python, ["-u", ApplicationBridgeTests.app, "hci0"],
                environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
            guard
                await app.waitForLine(within: .seconds(60), where: { $0 == "ready" || $0.contains("failed") })
                    == "ready"
            else {
                throw HarnessError("bridge-app.py: \(app.outputText) \(await app.finish())")
            }
            func device(_ of: String, under: String) async throws -> String {
                guard case .string(let address)? = try await client.property(of, "org.bluez.Adapter1", "Address") else {
                    throw HarnessError("\(of) has no Address")
                }
                return under + "/dev_" + address.replacingOccurrences(of: ":", with: "_")
            }
            return Bench(
                bus: bus, sim: sim, client: client, app: app,
                peripheral: try await device("/org/bluez/hci0", under: "/org/bluez/hci1"),
                central: try await device("/org/bluez/hci1", under: "/org/bluez/hci0"))
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

        /// The remote characteristic with `uuid` under hci1's device for hci0.
        func characteristic(_ uuid: String) async throws -> String {
            let objects = try await client.managedObjects()
            guard
                let path = objects.first(where: {
                    $0.key.hasPrefix(peripheral + "/") && $0.value[BlueZClient.characteristic]?["UUID"] == .string(uuid)
                })?.key
            else { throw HarnessError("no characteristic \(uuid) under \(peripheral)") }
            return path
        }

        /// hci1's AcquireWrite on the remote characteristic with `uuid`: its socket, or nil (recorded) when the
        /// reply holds none.
        func acquireWrite(_ uuid: Int) async throws -> Int32? {
            let characteristic = try await characteristic(ApplicationBridgeTests.uuid(uuid))
            let reply = try await client.call(
                characteristic, BlueZClient.characteristic, "AcquireWrite", [BlueZClient.emptyOptions])
            guard case .unixFD(let handle)? = reply.first?.unwrapped, let fd = handle.take() else {
                Issue.record("AcquireWrite replied \(reply)")
                return nil
            }
            return fd
        }

        /// Waits for the application to print a line satisfying `predicate`.
        func appSays(_ predicate: (String) -> Bool) async throws -> String? {
            await app.waitForLine(within: .seconds(60), where: predicate)
        }

        /// The options the application saw, as it prints them, for hci1 on hci0 (the scenario's MTU).
        var options: String { "device=\(central) mtu=\(Air.mtu) link=LE" }
    }

    /// Receives one packet from `fd` within `seconds` (nil on timeout or end of file).
    static func receive(_ fd: Int32, within seconds: Double = 60) async -> [UInt8]? {
        guard let packet = await readWhenReady(fd, capacity: 600, within: .milliseconds(Int64(seconds * 1000))),
            !packet.isEmpty
        else { return nil }
        return packet
    }

    /// The Battery1 properties of an InterfacesAdded for `path`, if one was signalled.
    static func batteryAdded(_ messages: [DBusMessage], _ path: String) -> [String: DBusValue]? {
        for message in messages where message.member == "InterfacesAdded" {
            guard let arguments = try? message.arguments(), arguments.count == 2,
                case .objectPath(let added) = arguments[0].unwrapped, added.description == path,
                let properties = BlueZClient.interfaces(arguments[1])["org.bluez.Battery1"]
            else { continue }
            return properties
        }
        return nil
    }

    @Test(
        "a central's AcquireNotify on an application characteristic is the application's StartNotify; closing the socket its StopNotify",
        .enabled(if: available))
    func acquireNotifyReachesStartNotify() async throws {
        let bench = try await Bench.start()
        try await bench.connect()
        let pulse = try await bench.characteristic(Self.uuid(2))
        let reply = try await bench.client.call(
            pulse, BlueZClient.characteristic, "AcquireNotify", [BlueZClient.emptyOptions])
        guard case .unixFD(let handle)? = reply.first?.unwrapped, let fd = handle.take() else {
            Issue.record("AcquireNotify replied \(reply)")
            return
        }
        #expect(reply.last?.unwrapped == .uint16(UInt16(Air.mtu)))
        #expect(try await bench.appSays { $0 == "StartNotify pulse" } != nil, "\(bench.app.outputText)")
        let first = await Self.receive(fd)
        let second = await Self.receive(fd)
        #expect(
            first?.count == 1 && second?.count == 1 && first != second,
            "\(String(describing: first)) \(String(describing: second))")
        close(fd)
        #expect(try await bench.appSays { $0 == "StopNotify pulse" } != nil, "\(bench.app.outputText)")
        _ = bench.sim
    }

    @Test(
        "an application offering AcquireNotify gets it with device, link and mtu; its socket's packets are notifications; the last StopNotify closes it",
        .enabled(if: available))
    func applicationAcquireNotify() async throws {
        let bench = try await Bench.start()
        try await bench.connect()
        let stream = try await bench.characteristic(Self.uuid(3))
        _ = try await bench.client.call(stream, BlueZClient.characteristic, "StartNotify")
        let expected = "AcquireNotify stream \(bench.options)"
        #expect(try await bench.appSays { $0.hasPrefix("AcquireNotify stream") } == expected, "\(bench.app.outputText)")
        #expect(
            await bench.client.log.wait(until: { messages in
                BlueZClient.values(messages, stream).filter { $0.first == 0x10 }.count >= 2
            }))
        #expect(!bench.app.outputText.contains("StartNotify stream"))
        _ = try await bench.client.call(stream, BlueZClient.characteristic, "StopNotify")
        #expect(try await bench.appSays { $0 == "stream socket closed" } != nil, "\(bench.app.outputText)")
        _ = bench.sim
    }

    @Test(
        "AcquireWrite by a central writes to the application's WriteValue; an application offering AcquireWrite gets its writes through its own socket",
        .enabled(if: available))
    func acquireWriteBothWays() async throws {
        let bench = try await Bench.start()
        try await bench.connect()
        guard let fd = try await bench.acquireWrite(1) else { return }
        for byte: UInt8 in [0x2a, 0x2b] {
            _ = [byte].withUnsafeBytes { send(fd, $0.baseAddress, 1, Int32(MSG_NOSIGNAL)) }
        }
        #expect(try await bench.appSays { $0.hasPrefix("WriteValue data 2a") } == "WriteValue data 2a \(bench.options)")
        #expect(try await bench.appSays { $0.hasPrefix("WriteValue data") } == "WriteValue data 2b \(bench.options)")
        close(fd)

        let sink = try await bench.characteristic(Self.uuid(4))
        try await bench.client.write(sink, [0x55], type: "command")
        try await bench.client.write(sink, [0x56], type: "command")
        #expect(try await bench.appSays { $0.hasPrefix("AcquireWrite sink") } == "AcquireWrite sink \(bench.options)")
        #expect(try await bench.appSays { $0.hasPrefix("sink got") } == "sink got 55")
        #expect(try await bench.appSays { $0.hasPrefix("sink got") } == "sink got 56", "\(bench.app.outputText)")
        #expect(bench.app.outputText.components(separatedBy: "AcquireWrite sink").count == 2)
        #expect(!bench.app.outputText.contains("WriteValue sink"))
        _ = bench.sim
    }

    @Test(
        "A central writing through AcquireWrite faster than the application takes the writes fills its own socket: blesim holds a bounded number, then delivers every write in order",
        .enabled(if: available))
    func acquireWriteBackpressure() async throws {
        let bench = try await Bench.start()
        try await bench.connect()
        guard let fd = try await bench.acquireWrite(1) else { return }
        defer { close(fd) }
        // The application stops answering (its first WriteValue stays pending); the central writes on until its
        // socket has stayed full for a second.
        bench.app.signal(SIGSTOP)
        var sent = 0
        while sent < 60_000 {
            let value = [UInt8(sent >> 8), UInt8(sent & 0xFF)]
            if value.withUnsafeBytes({ send(fd, $0.baseAddress, 2, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }) == 2 {
                sent += 1
                continue
            }
            guard errno == EAGAIN || errno == EWOULDBLOCK else {
                Issue.record("send failed: errno \(errno)")
                break
            }
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            if poll(&poller, 1, 1000) == 0 { break }
        }
        bench.app.signal(SIGCONT)
        #expect(sent > 0)
        #expect(sent < 5_000, "blesim went on reading writes the application did not take: \(sent) accepted")
        let last = String(format: "%04x", sent - 1)
        #expect(try await bench.appSays { $0.hasPrefix("WriteValue data \(last)") } != nil, "the last write arrives")
        let delivered = bench.app.outputText.split(separator: "\n").compactMap { line -> Int? in
            guard line.hasPrefix("WriteValue data ") else { return nil }
            return Int(line.dropFirst("WriteValue data ".count).prefix(4), radix: 16)
        }
        #expect(delivered == Array(0..<sent), "every write once, in order")
        _ = bench.sim
    }

    @Test(
        "a central's link going down ends its subscriptions at the application: StopNotify, or its AcquireNotify socket closed",
        .enabled(if: available))
    func linkLossUnsubscribes() async throws {
        let bench = try await Bench.start()
        try await bench.connect()
        let pulse = try await bench.characteristic(Self.uuid(2))
        let stream = try await bench.characteristic(Self.uuid(3))
        _ = try await bench.client.call(pulse, BlueZClient.characteristic, "StartNotify")
        _ = try await bench.client.call(stream, BlueZClient.characteristic, "StartNotify")
        #expect(try await bench.appSays { $0.hasPrefix("AcquireNotify stream") } != nil, "\(bench.app.outputText)")
        // Packets from the application's socket arrive: blesim holds the socket.
        #expect(
            await bench.client.log.wait(until: { BlueZClient.values($0, stream).contains { $0.first == 0x10 } }))
        #expect(bench.app.outputText.contains("StartNotify pulse"))
        #expect(bench.app.outputText.contains("StartNotify battery"))
        _ = try await bench.client.call(bench.peripheral, "org.bluez.Device1", "Disconnect")
        var wanted: Set<String> = ["StopNotify pulse", "stream socket closed", "StopNotify battery"]
        while !wanted.isEmpty, let line = try await bench.appSays({ wanted.contains($0) }) { wanted.remove(line) }
        #expect(wanted.isEmpty, "\(bench.app.outputText)")
        _ = bench.sim
    }

    @Test(
        "an indicate-only application characteristic is indicated to a subscribed central and each confirmation calls the application's Confirm",
        .enabled(if: available))
    func indicationsAreConfirmed() async throws {
        let bench = try await Bench.start()
        try await bench.connect()
        let alert = try await bench.characteristic(Self.uuid(5))
        _ = try await bench.client.call(alert, BlueZClient.characteristic, "StartNotify")
        #expect(try await bench.appSays { $0 == "StartNotify alert" } != nil)
        for _ in 0..<3 {
            #expect(try await bench.appSays { $0 == "Confirm alert" } != nil, "\(bench.app.outputText)")
        }
        #expect(await bench.client.log.wait(until: { BlueZClient.values($0, alert).count >= 3 }))
        // A characteristic that notifies is never confirmed.
        let pulse = try await bench.characteristic(Self.uuid(2))
        _ = try await bench.client.call(pulse, BlueZClient.characteristic, "StartNotify")
        #expect(await bench.client.log.wait(until: { BlueZClient.values($0, pulse).count >= 3 }))
        #expect(!bench.app.outputText.contains("Confirm pulse"))
        _ = bench.sim
    }

    @Test(
        "hci0 shows the central on hci1, and the virtual central, as a Device1: Connected and ServicesResolved true, then false",
        .enabled(if: available))
    func centralDeviceOnPeripheralAdapter() async throws {
        let bench = try await Bench.start()
        try await bench.connect()
        let central = bench.central
        #expect(await bench.client.log.wait(until: { Signals.addedDevices($0)[central] != nil }))
        #expect(await bench.client.log.wait(until: { BlueZClient.changed($0, central, "Connected", .boolean(true)) }))
        #expect(
            await bench.client.log.wait(until: { BlueZClient.changed($0, central, "ServicesResolved", .boolean(true)) })
        )
        let device = try await bench.client.managedObjects()[central]?["org.bluez.Device1"] ?? [:]
        guard
            case .string(let address)? = try await bench.client.property(
                "/org/bluez/hci1", "org.bluez.Adapter1", "Address")
        else { throw HarnessError("hci1 has no Address") }
        #expect(device["Address"] == .string(address))
        #expect(device["AddressType"] == .string("public"))
        #expect(device["Alias"] == .string(address.replacingOccurrences(of: ":", with: "-")))
        #expect(device["Adapter"] == .objectPath(try ObjectPath("/org/bluez/hci0")))
        #expect(device["Paired"] == .boolean(false) && device["Trusted"] == .boolean(false))
        #expect(device["Connected"] == .boolean(true) && device["ServicesResolved"] == .boolean(true))
        #expect(
            device["UUIDs"]?.arrayValue?.compactMap(\.stringValue).contains("00001800-0000-1000-8000-00805f9b34fb")
                == true)
        #expect(device["RSSI"] == nil && device["Name"] == nil)
        // The `device` option of the application's calls names this object.
        _ = try await bench.client.read(try await bench.characteristic(Self.uuid(1)))
        #expect(try await bench.appSays { $0.hasPrefix("ReadValue data") } == "ReadValue data \(bench.options)")

        _ = try await bench.client.call(bench.peripheral, "org.bluez.Device1", "Disconnect")
        #expect(await bench.client.log.wait(until: { BlueZClient.changed($0, central, "Connected", .boolean(false)) }))
        #expect(try await bench.client.property(central, "org.bluez.Device1", "ServicesResolved") == .boolean(false))

        let virtual = "/org/bluez/hci0/dev_C0_DE_00_00_00_01"
        try await bench.client.control("CentralConnect", [.string("hci0")])
        #expect(await bench.client.log.wait(until: { BlueZClient.changed($0, virtual, "Connected", .boolean(true)) }))
        #expect(try await bench.client.property(virtual, "org.bluez.Device1", "AddressType") == .string("random"))
        try await bench.client.control("CentralDisconnect", [.string("hci0")])
        #expect(await bench.client.log.wait(until: { BlueZClient.changed($0, virtual, "Connected", .boolean(false)) }))
        _ = bench.sim
    }

    @Test(
        "Battery1 appears on hci1's device for hci0 with the application's Battery Level, follows its notifications, and goes with the link",
        .enabled(if: available))
    func batteryFromApplication() async throws {
        let bench = try await Bench.start()
        try await bench.connect()
        let peripheral = bench.peripheral
        let battery = "org.bluez.Battery1"
        #expect(
            await bench.client.log.wait(until: { Self.batteryAdded($0, peripheral)?["Percentage"] == .byte(80) }))
        // The plugin read the level, then wrote the CCC: the application's StartNotify.
        #expect(try await bench.appSays { $0 == "StartNotify battery" } != nil)
        #expect(bench.app.outputText.contains("ReadValue battery \(bench.options)"))
        #expect(await bench.client.log.wait(until: { BlueZClient.changed($0, peripheral, "Percentage", .byte(79)) }))
        // The plugin's subscription is not a D-Bus client's: Notifying stays false.
        let level = try await bench.characteristic("00002a19-0000-1000-8000-00805f9b34fb")
        #expect(try await bench.client.property(level, BlueZClient.characteristic, "Notifying") == .boolean(false))
        _ = try await bench.client.call(peripheral, "org.bluez.Device1", "Disconnect")
        #expect(
            await bench.client.log.wait(until: { messages in
                messages.contains { message in
                    guard message.member == "InterfacesRemoved", let arguments = try? message.arguments(),
                        arguments.count == 2, case .objectPath(let removed) = arguments[0].unwrapped
                    else { return false }
                    return removed.description == peripheral
                        && arguments[1].arrayValue?.compactMap(\.stringValue) == [battery]
                }
            }))
        #expect(try await bench.client.managedObjects()[peripheral]?["org.bluez.Device1"] != nil)
        _ = bench.sim
    }

    @Test("Battery1 on a scenario device: Percentage from its Battery Level; Source absent without --experimental")
    func batteryFromScenarioDevice() async throws {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(
            address: bus.address, scenario: nil, options: ["--scenario", Air.scenario])
        let client = try await BlueZClient.connect(bus)
        try await client.connectHRM()
        #expect(await client.log.wait(until: { Self.batteryAdded($0, Air.hrm) != nil }))
        guard case .byte(let level)? = try await client.property(Air.hrm, "org.bluez.Battery1", "Percentage") else {
            Issue.record("no Battery1.Percentage on \(Air.hrm)")
            return
        }
        #expect(level <= 100)
        // Source is experimental in 5.66: absent without --experimental.
        #expect(
            await client.errorName { _ = try await client.property(Air.hrm, "org.bluez.Battery1", "Source") } != nil)
        _ = sim
    }
}
