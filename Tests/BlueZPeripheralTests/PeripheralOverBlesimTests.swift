import BLE
import BLETesting
import BlueZ
import DBus
import GATT
import Glibc
import Testing

/// ATT requests to a peripheral against blesim: a PeripheralManager over BlueZPeripheralBackend
/// serves a service on hci0 and blesim's virtual central (org.blesim.Control1) reads, writes and
/// subscribes, as a remote central's ATT requests reach an application through bluetoothd.
@Suite("PeripheralManager's requests against blesim's virtual central", .serialized, .timeLimit(.minutes(1)))
struct PeripheralOverBlesimTests {
    static let level = LocalCharacteristic(service: .battery, uuid: .batteryLevel)
    static let hci0 = DBusValue.string("hci0")

    @Test(
        "reads answered by the plugin, a write refused with an ATT error, a subscription event (StartNotify: unidentified central, MTU 23), updateValue notifies, an unanswered read becomes Unlikely Error at the deadline"
    )
    func requestsFromAVirtualCentral() async throws {
        try await PrivateBus.with { bus in
            let sim = try await BlesimProcess.start(address: bus.address)
            defer { sim.stop() }
            let connection = try await bus.connect()
            let backend = try await BlueZPeripheralBackend.start(connection: connection)
            let manager = PeripheralManager(
                backend: backend, options: .init(adapter: "hci0", requestTimeout: .seconds(1)))
            for await state in manager.stateUpdates() where state == .poweredOn { break }
            try await manager.add(
                GATTService(
                    uuid: .battery,
                    characteristics: [GATTCharacteristic(uuid: .batteryLevel, properties: [.read, .write, .notify])]))
            let central = try await bus.connect()
            func control(_ member: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
                try await central.call(
                    destination: "org.bluez", path: try ObjectPath("/org/blesim"), interface: "org.blesim.Control1",
                    member: member, arguments: arguments
                ).arguments()
            }
            let notifications = try await central.signals(
                MatchRule(sender: "org.bluez", interface: "org.blesim.Control1", member: "Notification"),
                buffering: .unbounded)
            var requests = manager.requests().makeAsyncIterator()
            var subscriptions = manager.subscriptionEvents().makeAsyncIterator()
            _ = try await control("CentralConnect", [Self.hci0])

            let read = Task { try await control("CentralRead", [Self.hci0, .string("2a19")]) }
            let readRequest = try #require(await requests.next())
            #expect(readRequest.isRead && readRequest.characteristic == Self.level && readRequest.offset == 0)
            #expect(readRequest.respond(with: [42]))
            #expect(try await read.value.first?.bytesValue == [42])

            let write = Task {
                try await control("CentralWrite", [Self.hci0, .string("2a19"), .bytes([7]), .boolean(true)])
            }
            let writeRequest = try #require(await requests.next())
            #expect(!writeRequest.isRead && writeRequest.value == [7])
            #expect(writeRequest.respond(withError: .writeNotPermitted))
            do {
                _ = try await write.value
                Issue.record("a refused write succeeded")
            } catch let error as DBusError {
                #expect(error.name.rawValue == "org.bluez.Error.NotPermitted", "\(error)")
            }

            _ = try await control("CentralSubscribe", [Self.hci0, .string("2a19"), .boolean(true)])
            guard case .subscribed(let who, let characteristic, let mtu)? = await subscriptions.next() else {
                Issue.record("no subscription event")
                return
            }
            // bluetoothd 5.66 calls the application's StartNotify without options (no device, no
            // mtu): the manager reports an unidentified central with the minimum MTU.
            #expect(characteristic == Self.level)
            #expect(mtu.value == 23, "\(mtu)")
            #expect(manager.subscribers(of: Self.level)[who] != nil)
            #expect(manager.updateValue([55], for: Self.level))
            var signals = notifications.makeAsyncIterator()
            let notified = try #require(await signals.next())
            #expect(try notified.arguments().last?.bytesValue == [55])

            // Nobody answers this one: the manager answers Unlikely Error (0x0e) at its deadline.
            let unanswered = Task { try await control("CentralRead", [Self.hci0, .string("2a19")]) }
            let ignored = try #require(await requests.next())
            do {
                _ = try await unanswered.value
                Issue.record("an unanswered read succeeded")
            } catch let error as DBusError {
                #expect(error.name.rawValue == "org.bluez.Error.Failed", "\(error)")
                #expect(error.message == "Operation failed with ATT error: 0x0e", "\(error)")
            }
            #expect(ignored.isAnswered)
            await central.close()
            await backend.shutdown()
            await connection.close()
        }
    }
    @Test(
        "the application's objects refuse a stranger with AccessDenied while blesim reads them; a power cycle is poweredOff, poweredOn and the service back; removeAllServices takes it off the air"
    )
    func accessPowerCycleAndRemoval() async throws {
        try await PrivateBus.with { bus in
            let sim = try await BlesimProcess.start(address: bus.address)
            defer { sim.stop() }
            let connection = try await bus.connect()
            let backend = try await BlueZPeripheralBackend.start(connection: connection)
            let manager = PeripheralManager(backend: backend, options: .init(adapter: "hci0"))
            var states = manager.stateUpdates().makeAsyncIterator()
            for await state in manager.stateUpdates() where state == .poweredOn { break }
            try await manager.add(
                GATTService(
                    uuid: .battery, characteristics: [GATTCharacteristic(uuid: .batteryLevel, properties: [.read])]))
            let answering = Task {
                for await request in manager.requests() { _ = request.respond(with: [77]) }
            }
            defer { answering.cancel() }
            let central = try await bus.connect()
            func control(_ member: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
                try await central.call(
                    destination: "org.bluez", path: try ObjectPath("/org/blesim"), interface: "org.blesim.Control1",
                    member: member, arguments: arguments
                ).arguments()
            }
            /// The virtual central's read of Battery Level once hci0 serves it (bounded wait): the
            /// manager may register its application again meanwhile, which drops the link.
            func readWhenServed() async throws -> [UInt8]? {
                let clock = ContinuousClock()
                let deadline = clock.now + .seconds(20)
                while true {
                    do {
                        _ = try await control("CentralConnect", [Self.hci0])
                        return try await control("CentralRead", [Self.hci0, .string("2a19")]).first?.bytesValue
                    } catch let error as DBusError where clock.now < deadline {
                        _ = error
                        try await Task.sleep(for: .milliseconds(50))
                    }
                }
            }

            // The first application is /org/bleagent/peripheral/app1 (BlueZPeripheralBackend's layout).
            let stranger = try await bus.connect()
            let owner = try #require(connection.uniqueName)
            do {
                _ = try await stranger.call(
                    destination: owner, path: try ObjectPath("/org/bleagent/peripheral/app1/service0/char0"),
                    interface: "org.bluez.GattCharacteristic1", member: "ReadValue",
                    arguments: [.dictionary(key: .string, value: .variant, [])])
                Issue.record("a stranger read the application's characteristic")
            } catch let error as DBusError {
                #expect(error.name == .accessDenied, "\(error)")
            }
            #expect(try await readWhenServed() == [77])

            _ = try await control("PowerCycle", [.uint32(0)])
            // poweredOff, then poweredOn (bounded by the suite's time limit).
            var seen: [ManagerState] = []
            while let state = await states.next() {
                if state == .poweredOff || (state == .poweredOn && seen.contains(.poweredOff)) { seen.append(state) }
                if seen.last == .poweredOn { break }
            }
            #expect(seen == [.poweredOff, .poweredOn])
            #expect(try await readWhenServed() == [77], "served after the power cycle")

            try await manager.removeAllServices()
            #expect(manager.services.isEmpty)
            do {
                _ = try await control("CentralConnect", [Self.hci0])
                _ = try await control("CentralRead", [Self.hci0, .string("2a19")])
                Issue.record("the removed service was still served")
            } catch let error as DBusError {
                #expect(error.name.rawValue.hasPrefix("org.bluez.Error."), "\(error)")
            }
            await stranger.close()
            await central.close()
            await backend.shutdown()
            await connection.close()
        }
    }
    @Test(
        "peripheral restoration against blesim: a manager whose connection dies is replaced by one on the same store, which restores, registers and advertises again"
    )
    func restorationAfterTheProcessDies() async throws {
        try await PrivateBus.with { bus in
            let sim = try await BlesimProcess.start(address: bus.address)
            defer { sim.stop() }
            let directory = bus.directory + "/state"
            #expect(mkdir(directory, 0o700) == 0)
            defer {  // PrivateBus removes its directory's files, not subdirectories
                unlink(directory + "/peripheral.json")
                rmdir(directory)
            }
            let store = try #require(RestorationStore(directory: directory, restoreIdentifier: "peripheral"))
            let battery = GATTService(
                uuid: .battery, characteristics: [GATTCharacteristic(uuid: .batteryLevel, properties: [.read])])
            let advertisement = AdvertisingData(serviceUUIDs: [.battery], localName: "bat")
            do {
                let connection = try await bus.connect()
                let backend = try await BlueZPeripheralBackend.start(connection: connection)
                let manager = PeripheralManager(
                    backend: backend, options: .init(adapter: "hci0", restoration: store))
                for await state in manager.stateUpdates() where state == .poweredOn { break }
                try await manager.add(battery)
                try await manager.startAdvertising(advertisement)
                // As a killed process: the connection goes, nothing is unregistered by us; blesim
                // (as bluetoothd) drops the vanished owner's application and advertisement.
                await connection.close()
            }
            let monitor = try await bus.connect()
            func activeInstances() async throws -> DBusValue? {
                try await monitor.call(
                    destination: "org.bluez", path: try ObjectPath("/org/bluez/hci0"),
                    interface: "org.freedesktop.DBus.Properties", member: "Get",
                    arguments: [.string("org.bluez.LEAdvertisingManager1"), .string("ActiveInstances")]
                ).arguments().first?.unwrapped
            }
            let clock = ContinuousClock()
            var deadline = clock.now + .seconds(20)
            while try await activeInstances() != .byte(0), clock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(try await activeInstances() == .byte(0), "the old advertisement left with its owner")

            let connection = try await bus.connect()
            let backend = try await BlueZPeripheralBackend.start(connection: connection)
            let manager = PeripheralManager(
                backend: backend, options: .init(adapter: "hci0", restoration: store))
            #expect(
                manager.restoredState == .restored(RestorationState(services: [battery], advertising: advertisement)))
            let answering = Task {
                for await request in manager.requests() { _ = request.respond(with: [64]) }
            }
            defer { answering.cancel() }
            deadline = clock.now + .seconds(20)
            while try await activeInstances() != .byte(1), clock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(try await activeInstances() == .byte(1), "advertising again")
            #expect(manager.isAdvertising)
            #expect(manager.services == [battery])
            let control = { (member: String, arguments: [DBusValue]) async throws -> [DBusValue] in
                try await monitor.call(
                    destination: "org.bluez", path: try ObjectPath("/org/blesim"), interface: "org.blesim.Control1",
                    member: member, arguments: arguments
                ).arguments()
            }
            _ = try await control("CentralConnect", [Self.hci0])
            #expect(try await control("CentralRead", [Self.hci0, .string("2a19")]).first?.bytesValue == [64])
            await monitor.close()
            await backend.shutdown()
            await connection.close()
        }
    }
}
