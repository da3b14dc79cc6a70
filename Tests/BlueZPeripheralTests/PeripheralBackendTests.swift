import BLE
import BLETesting
import BlueZ
import DBus
import GATT
import Testing

/// A PeripheralManager over BlueZPeripheralBackend, on a private bus with a
/// fake bluetoothd, powered on.
struct Rig {
    let bus: PrivateBus
    let fake: FakeBluetoothd
    let backend: BlueZPeripheralBackend
    let manager: PeripheralManager

    static let battery = GATTService(
        uuid: .battery,
        characteristics: [
            GATTCharacteristic(
                uuid: .batteryLevel, properties: [.read, .notify],
                descriptors: [
                    GATTDescriptor(uuid: BluetoothUUID(uuid16: 0x2902), permissions: [.readable, .writeable]),
                    GATTDescriptor(
                        uuid: BluetoothUUID(uuid16: 0x2901), permissions: [.readable], value: Array("lvl".utf8)),
                ]),
            GATTCharacteristic(uuid: BluetoothUUID(uuid16: 0x2A1A), properties: [.read, .write]),
        ])
    static let level = LocalCharacteristic(service: .battery, uuid: .batteryLevel)
    static let levelPath = "/service0/char0"

    static func start(
        _ bus: PrivateBus, options: BlueZPeripheralBackend.Options = .init()
    ) async throws -> Rig {
        let fake = try await FakeBluetoothd.start(on: bus)
        let backend = try await BlueZPeripheralBackend.start(connection: try await bus.connect(), options: options)
        let manager = PeripheralManager(backend: backend, options: .init(adapter: "hci0"))
        for await state in manager.stateUpdates() where state == .poweredOn { break }
        return Rig(bus: bus, fake: fake, backend: backend, manager: manager)
    }
}

func applicationRegistered(_ events: inout AsyncStream<FakeBluetoothd.Event>.Iterator) async -> (ObjectPath, DBusValue)?
{
    while let event = await events.next() {
        if case .applicationRegistered(let root, let objects) = event { return (root, objects) }
    }
    return nil
}

/// The next advertisement registration, passing over application (re-)registrations,
/// which the manager may repeat when it learns the adapter's state.
func advertisementRegistered(_ events: inout AsyncStream<FakeBluetoothd.Event>.Iterator) async -> DBusValue? {
    while let event = await events.next() {
        if case .advertisementRegistered(_, let properties) = event { return properties }
    }
    return nil
}

func firstRequest(_ manager: PeripheralManager) -> Task<ATTRequest?, Never> {
    let stream = manager.requests()
    return Task {
        for await request in stream { return request }
        return nil
    }
}

@Suite(.timeLimit(.minutes(1))) struct PeripheralBackendTests {
    @Test func exportsTheApplicationTreeThatBluetoothdReadsBeforeReplying() async throws {
        try await PrivateBus.with { bus in
            let rig = try await Rig.start(bus)
            var events = rig.fake.events.makeAsyncIterator()
            try await rig.manager.add(Rig.battery)
            let registered = try #require(await applicationRegistered(&events))
            let root = registered.0.rawValue
            let objects = try #require(registered.1.dictionaryEntries)
            let paths = Set(objects.compactMap { $0.key.stringValue })
            // The CCC descriptor is bluetoothd's to make: only the user description is exported.
            #expect(
                paths == [
                    root + "/service0", root + "/service0/char0", root + "/service0/char0/desc0",
                    root + "/service0/char1",
                ])
            func interface(_ path: String, _ name: String) -> DBusValue? {
                objects.first { $0.key.stringValue == path }?.value[name]
            }
            let service = try #require(interface(root + "/service0", "org.bluez.GattService1"))
            #expect(service["UUID"]?.stringValue == "0000180f-0000-1000-8000-00805f9b34fb")
            #expect(service["Primary"]?.boolValue == true)
            let level = try #require(interface(root + Rig.levelPath, "org.bluez.GattCharacteristic1"))
            #expect(level["Flags"]?.arrayValue?.compactMap(\.stringValue) == ["read", "notify"])
            #expect(level["Service"]?.stringValue == root + "/service0")
            let writable = try #require(interface(root + "/service0/char1", "org.bluez.GattCharacteristic1"))
            #expect(writable["Flags"]?.arrayValue?.compactMap(\.stringValue) == ["read", "write"])
            let descriptor = try #require(interface(root + "/service0/char0/desc0", "org.bluez.GattDescriptor1"))
            #expect(descriptor["UUID"]?.stringValue == "00002901-0000-1000-8000-00805f9b34fb")
            #expect(descriptor["Characteristic"]?.stringValue == root + Rig.levelPath)
            #expect(descriptor["Flags"]?.arrayValue?.compactMap(\.stringValue) == ["read"])
            // A change re-registers the whole application: unregister the old root, register a new one.
            try await rig.manager.add(GATTService(uuid: BluetoothUUID(uuid16: 0x180A)))
            let unregistered = await events.next()
            guard case .applicationUnregistered(let old) = unregistered else {
                Issue.record("expected UnregisterApplication, got \(String(describing: unregistered))")
                return
            }
            #expect(old.rawValue == root)
            let again = try #require(await applicationRegistered(&events))
            #expect(again.0.rawValue != root)
            #expect(again.1.dictionaryEntries?.count == 5)
            await rig.backend.shutdown()
        }
    }

    @Test func refusesEveryCallerButBluetoothd() async throws {
        try await PrivateBus.with { bus in
            let rig = try await Rig.start(bus)
            var events = rig.fake.events.makeAsyncIterator()
            try await rig.manager.add(Rig.battery)
            let root = try #require(await applicationRegistered(&events)).0
            let stranger = try await bus.connect()
            let target = try #require(rig.backend.connection.uniqueName)
            for (path, interface, member, arguments) in [
                (
                    root.rawValue + Rig.levelPath, "org.bluez.GattCharacteristic1", "ReadValue",
                    [DBusValue.dictionary(key: .string, value: .variant, [])]
                ),
                (root.rawValue, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", []),
                (
                    root.rawValue + Rig.levelPath, "org.freedesktop.DBus.Properties", "GetAll",
                    [.string("org.bluez.GattCharacteristic1")]
                ),
            ] {
                await #expect(throws: DBusError.self) {
                    do {
                        _ = try await stranger.call(
                            destination: target, path: ObjectPath(path), interface: interface, member: member,
                            arguments: arguments)
                    } catch let error as DBusError {
                        #expect(error.name == .accessDenied, "\(member): \(error)")
                        throw error
                    }
                }
            }
            // bluetoothd itself is served.
            let reply = try await rig.fake.callApplication(
                root, "GetManagedObjects", interface: "org.freedesktop.DBus.ObjectManager")
            #expect(try reply.arguments().first?.dictionaryEntries?.isEmpty == false)
            await rig.backend.shutdown()
        }
    }

    @Test func shutdownUnregistersAndClosesTheLinksOfTheCentralsItServed() async throws {
        try await PrivateBus.with { bus in
            let rig = try await Rig.start(bus)
            var events = rig.fake.events.makeAsyncIterator()
            try await rig.manager.add(Rig.battery)
            let root = try #require(await applicationRegistered(&events)).0
            try await rig.manager.startAdvertising(AdvertisingData(localName: "gw"))
            #expect(await advertisementRegistered(&events) != nil)
            // A central reads: the backend learns its device.
            let pending = firstRequest(rig.manager)
            let options = DBusValue.dictionary(
                key: .string, value: .variant, [(.string("device"), .variant(.objectPath(FakeBluetoothd.device)))])
            async let reply = rig.fake.callApplication(
                try ObjectPath(root.rawValue + Rig.levelPath), "ReadValue", [options])
            try #require(await pending.value).respond(with: [1])
            _ = try await reply
            await rig.backend.shutdown()
            var seen: [String] = []
            while seen.count < 3, let event = await events.next() {
                switch event {
                case .advertisementUnregistered: seen.append("advertisement unregistered")
                case .applicationUnregistered: seen.append("application unregistered")
                case .deviceDisconnected(let device): seen.append("disconnected \(device)")
                default: break
                }
            }
            #expect(
                seen == [
                    "advertisement unregistered", "application unregistered",
                    "disconnected \(FakeBluetoothd.device)",
                ])
        }
    }

    @Test func readAndWriteOptionsBecomeRequestsAndAnswersMapToBlueZErrors() async throws {
        try await PrivateBus.with { bus in
            let rig = try await Rig.start(bus)
            var events = rig.fake.events.makeAsyncIterator()
            try await rig.manager.add(Rig.battery)
            let root = try #require(await applicationRegistered(&events)).0
            let level = try ObjectPath(root.rawValue + Rig.levelPath)
            let options = DBusValue.dictionary(
                key: .string, value: .variant,
                [
                    (.string("device"), .variant(.objectPath(FakeBluetoothd.device))),
                    (.string("offset"), .variant(.uint16(2))), (.string("mtu"), .variant(.uint16(185))),
                    (.string("link"), .variant(.string("LE"))),
                ])
            // A read: offset, MTU and the central (Device1 Address + AddressType) reach the plugin.
            let pending = firstRequest(rig.manager)
            async let reply = rig.fake.callApplication(level, "ReadValue", [options])
            let request = try #require(await pending.value)
            #expect(request.isRead && request.offset == 2 && request.info.mtu == ATTMTU(clamping: 185))
            #expect(
                request.central
                    == PeripheralIdentifier(
                        adapter: FakeBluetoothd.adapterAddress, address: "11:22:33:44:55:66", addressType: .random))
            #expect(request.characteristic == Rig.level)
            request.respond(with: [7, 8, 9])
            #expect(try await reply.arguments().first?.bytesValue == [7, 8, 9])

            // The error table: NotPermitted means read or write by method; others as BlueZ reads them.
            let cases: [(String, ATTError, String, String?)] = [
                ("ReadValue", .readNotPermitted, "org.bluez.Error.NotPermitted", nil),
                ("WriteValue", .writeNotPermitted, "org.bluez.Error.NotPermitted", nil),
                ("ReadValue", .writeNotPermitted, "org.bluez.Error.Failed", "0x03"),
                ("WriteValue", ATTError(0x80), "org.bluez.Error.Failed", "0x80"),
                ("ReadValue", .invalidOffset, "org.bluez.Error.InvalidOffset", nil),
            ]
            for (method, error, name, message) in cases {
                let next = firstRequest(rig.manager)
                let arguments: [DBusValue] = method == "ReadValue" ? [options] : [.bytes([1, 2]), options]
                async let answer = rig.fake.callApplication(level, method, arguments)
                let request = try #require(await next.value)
                #expect(request.isRead == (method == "ReadValue"))
                if !request.isRead { #expect(request.value == [1, 2]) }
                request.respond(withError: error)
                do {
                    _ = try await answer
                    Issue.record("\(method) \(error) succeeded")
                } catch let reply as DBusError {
                    #expect(reply.name.rawValue == name, "\(method) \(error)")
                    if let message { #expect(reply.message == message) }
                }
            }

            // StartNotify: a subscription (bluetoothd names no central); Value changes notify.
            let subscriptions = rig.manager.subscriptionEvents()
            _ = try await rig.fake.callApplication(level, "StartNotify")
            for await event in subscriptions {
                #expect(
                    event
                        == .subscribed(
                            central: BlueZPeripheralBackend.unidentifiedCentral(
                                adapterAddress: FakeBluetoothd.adapterAddress),
                            characteristic: Rig.level, mtu: .minimum))
                break
            }
            let changes = try await rig.fake.connection.signals(.propertiesChanged(pathNamespace: level))
            #expect(rig.manager.updateValue([42], for: Rig.level))
            for await signal in changes {
                let arguments = try signal.arguments()
                #expect(arguments[1]["Value"]?.bytesValue == [42])
                break
            }
            await rig.backend.shutdown()
        }
    }

    @Test func registersApplicationAndAdvertisementAgainAfterBluetoothdRestarts() async throws {
        try await PrivateBus.with { bus in
            let rig = try await Rig.start(bus)
            var events = rig.fake.events.makeAsyncIterator()
            try await rig.manager.add(Rig.battery)
            _ = try #require(await applicationRegistered(&events))
            let instances = try await rig.backend.advertisingInstances(adapter: FakeBluetoothd.adapter.rawValue)
            #expect(instances.supported == 5 && instances.active == 0)
            try await rig.manager.startAdvertising(AdvertisingData(serviceUUIDs: [.battery], localName: "bat"))
            guard let properties = await advertisementRegistered(&events) else {
                Issue.record("no RegisterAdvertisement")
                return
            }
            #expect(properties["Type"]?.stringValue == "peripheral")
            #expect(properties["LocalName"]?.stringValue == "bat")
            #expect(
                properties["ServiceUUIDs"]?.arrayValue?.compactMap(\.stringValue) == [BluetoothUUID.battery.uuidString])

            // bluetoothd goes away and a new one (another unique name) takes org.bluez.
            // The new one asks for the name once the old one is gone (the manager says so): bluetoothd asks with
            // DO_NOT_QUEUE, so a request while the bus still has the old owner is refused (and bluetoothd exits).
            var states = rig.manager.stateUpdates().makeAsyncIterator()
            var seen: [ManagerState] = []
            await rig.fake.connection.close()
            while let state = await states.next() {
                seen.append(state)
                if state == .resetting || state == .unknown { break }
            }
            let second = try await FakeBluetoothd.start(on: bus)
            var secondEvents = second.events.makeAsyncIterator()
            while let state = await states.next() {
                seen.append(state)
                if state == .poweredOn { break }
            }
            var gotApplication = false
            var gotAdvertisement = false
            while !(gotApplication && gotAdvertisement), let event = await secondEvents.next() {
                switch event {
                case .applicationRegistered: gotApplication = true
                case .advertisementRegistered: gotAdvertisement = true
                default: break
                }
            }
            #expect(
                gotApplication && gotAdvertisement,
                "states \(seen), registrations \(rig.manager.registrationFailures)")
            // The new daemon is served; it is the only one that is.
            let root = try #require(second.application.withLock { $0?.root })
            let reply = try await second.callApplication(
                root, "GetManagedObjects", interface: "org.freedesktop.DBus.ObjectManager")
            #expect(try reply.arguments().first?.dictionaryEntries?.count == 4)

            // shutdown unregisters both.
            await rig.backend.shutdown()
            var unregistered: Set<String> = []
            while unregistered.count < 2, let event = await secondEvents.next() {
                if case .advertisementUnregistered = event { unregistered.insert("advertisement") }
                if case .applicationUnregistered = event { unregistered.insert("application") }
            }
            #expect(unregistered == ["advertisement", "application"])
        }
    }

    @Test("a bluetoothd that has the name but does not answer GetManagedObjects yet is asked again until it does")
    func asksForTheAdaptersAgainUntilBluetoothdAnswers() async throws {
        try await PrivateBus.with { bus in
            // The name without the objects: GetManagedObjects fails (no such object) until they are exported.
            let fake = try await FakeBluetoothd.start(on: bus, exporting: false)
            let backend = try await BlueZPeripheralBackend.start(connection: try await bus.connect())
            let manager = PeripheralManager(backend: backend, options: .init(adapter: "hci0"))
            var states = manager.stateUpdates().makeAsyncIterator()
            await fake.rootCalls.wait(for: 1)
            try fake.exportObjects()
            var seen: [ManagerState] = []
            while let state = await states.next() {
                seen.append(state)
                if state == .poweredOn { break }
            }
            #expect(
                seen.last == .poweredOn, "states \(seen), GetManagedObjects asked \(fake.rootCalls.values.count) times")
            await backend.shutdown()
        }
    }

    @Test func aFullTransmitQueueRefusesUpdatesUntilBluetoothdConfirmsAnIndication() async throws {
        try await PrivateBus.with { bus in
            let rig = try await Rig.start(bus, options: .init(transmitQueueLimit: 1))
            var events = rig.fake.events.makeAsyncIterator()
            let alert = BluetoothUUID(uuid16: 0x2A06)
            try await rig.manager.add(
                GATTService(uuid: .battery, characteristics: [GATTCharacteristic(uuid: alert, properties: [.indicate])])
            )
            let root = try #require(await applicationRegistered(&events)).0
            let path = try ObjectPath(root.rawValue + Rig.levelPath)
            let characteristic = LocalCharacteristic(service: .battery, uuid: alert)
            let subscriptions = rig.manager.subscriptionEvents()
            _ = try await rig.fake.callApplication(path, "StartNotify")
            for await _ in subscriptions { break }
            let ready = rig.manager.readyToUpdate()
            #expect(rig.manager.updateValue([1], for: characteristic))
            // The indication holds the only slot until bluetoothd confirms it.
            #expect(!rig.manager.updateValue([2], for: characteristic))
            _ = try await rig.fake.callApplication(path, "Confirm")
            for await _ in ready { break }
            #expect(rig.manager.updateValue([2], for: characteristic))
            await rig.backend.shutdown()
        }
    }
}
