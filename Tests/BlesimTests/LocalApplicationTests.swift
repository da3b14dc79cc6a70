import BLETesting
import DBus
import Foundation
import Synchronization
import Testing

/// A GATT application and advertisement written here (on the DBus module) registered on
/// blesim's hci0, to see exactly what blesim passes them and how it checks them.
@Suite(
    "Local GATT application: registration checks and what blesim passes the application", .serialized,
    .timeLimit(.minutes(2)))
struct LocalApplicationTests {
    /// What the application was called with: (member, options) in order.
    final class Calls: Sendable {
        private struct State {
            var list: [(String, [String: DBusValue])] = []
            var waiters: [(String, CheckedContinuation<Void, Never>)] = []
        }
        private let state = Mutex(State())

        func record(_ member: String, _ options: DBusValue?) {
            var out: [String: DBusValue] = [:]
            for entry in options?.dictionaryEntries ?? [] {
                if let key = entry.key.stringValue { out[key] = entry.value.unwrapped }
            }
            let ready = state.withLock { state in
                state.list.append((member, out))
                let ready = state.waiters.filter { $0.0 == member }.map(\.1)
                state.waiters.removeAll { $0.0 == member }
                return ready
            }
            for waiter in ready { waiter.resume() }
        }

        var all: [(String, [String: DBusValue])] { state.withLock { $0.list } }

        /// Returns once `member` was called (the test's time limit bounds the wait).
        func wait(for member: String) async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done = state.withLock { state in
                    if state.list.contains(where: { $0.0 == member }) { return true }
                    state.waiters.append((member, continuation))
                    return false
                }
                if done { continuation.resume() }
            }
        }
    }

    static let chrcPath = "/test/app/service0/char0"

    /// Exports a Battery service with one read/write/notify characteristic at /test/app and an
    /// advertisement at /test/adv on `connection`.
    static func exportApplication(_ connection: DBusConnection, calls: Calls, bigAdvertisement: Bool = false) throws {
        let objects = connection.objects
        objects.addObjectManager(at: try ObjectPath("/test/app"))
        try objects.export(
            ObjectPath("/test/app/service0"),
            interfaces: [
                try ExportedInterface(
                    "org.bluez.GattService1", methods: [],
                    properties: [
                        ExportedProperty("UUID", type: .string, value: .string("0000180f-0000-1000-8000-00805f9b34fb")),
                        ExportedProperty("Primary", type: .boolean, value: .boolean(true)),
                    ])
            ])
        try objects.export(
            ObjectPath(chrcPath),
            interfaces: [
                try ExportedInterface(
                    "org.bluez.GattCharacteristic1",
                    methods: [
                        ExportedMethod("ReadValue", in: "a{sv}", out: "ay") { call in
                            calls.record("ReadValue", try call.arguments().first)
                            return [.bytes([0x42, 0x43])]
                        },
                        ExportedMethod("WriteValue", in: "aya{sv}", out: "") { call in
                            calls.record("WriteValue", try call.arguments().last)
                            throw DBusError(DBusError.Name(rawValue: "org.bluez.Error.NotAuthorized"), "")
                        },
                        ExportedMethod("StartNotify", in: "", out: "") { _ in
                            calls.record("StartNotify", nil)
                            return []
                        },
                        ExportedMethod("StopNotify", in: "", out: "") { _ in
                            calls.record("StopNotify", nil)
                            return []
                        },
                    ],
                    properties: [
                        ExportedProperty("UUID", type: .string, value: .string("00002a19-0000-1000-8000-00805f9b34fb")),
                        ExportedProperty(
                            "Service", type: .objectPath, value: .objectPath(ObjectPath("/test/app/service0"))),
                        ExportedProperty(
                            "Flags", type: .array(.string),
                            value: .array(.string, ["read", "write", "notify"].map(DBusValue.string))),
                        ExportedProperty("Value", type: .array(.byte), value: .bytes([0])),
                    ])
            ])
        let data = bigAdvertisement ? [UInt8](repeating: 7, count: 60) : [1, 2]
        try objects.export(
            ObjectPath("/test/adv"),
            interfaces: [
                try ExportedInterface(
                    "org.bluez.LEAdvertisement1",
                    methods: [
                        ExportedMethod("Release", in: "", out: "") { _ in
                            calls.record("Release", nil)
                            return []
                        }
                    ],
                    properties: [
                        ExportedProperty("Type", type: .string, value: .string("peripheral")),
                        ExportedProperty(
                            "ServiceUUIDs", type: .array(.string), value: .array(.string, [.string("180F")])),
                        ExportedProperty(
                            "ManufacturerData", type: .dictionary(key: .uint16, value: .variant),
                            value: .dictionary(
                                key: .uint16, value: .variant, [(.uint16(0xFFFF), .variant(.bytes(data)))])),
                    ])
            ])
    }

    static func register(_ connection: DBusConnection, adapter: String = "/org/bluez/hci0") async throws {
        let empty = DBusValue.dictionary(key: .string, value: .variant, [])
        _ = try await connection.call(
            destination: "org.bluez", path: ObjectPath(adapter), interface: "org.bluez.GattManager1",
            member: "RegisterApplication", arguments: [.objectPath(ObjectPath("/test/app")), empty])
        _ = try await connection.call(
            destination: "org.bluez", path: ObjectPath(adapter), interface: "org.bluez.LEAdvertisingManager1",
            member: "RegisterAdvertisement", arguments: [.objectPath(ObjectPath("/test/adv")), empty])
    }

    @Test(
        "a second registration of the same application is AlreadyExists; an advertisement over 31 + 31 bytes is Failed; power off Releases the advertisement"
    )
    func registrationChecks() async throws {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(address: bus.address, scenario: nil, options: ["--adapters", "2"])
        let calls = Calls()
        let app = try await DBusConnection.connect(address: bus.address)
        try Self.exportApplication(app, calls: calls)
        try await Self.register(app)
        let client = try await BlueZClient.connect(bus)
        let again = await client.errorName {
            _ = try await app.call(
                destination: "org.bluez", path: ObjectPath("/org/bluez/hci0"), interface: "org.bluez.GattManager1",
                member: "RegisterApplication",
                arguments: [.objectPath(ObjectPath("/test/app")), .dictionary(key: .string, value: .variant, [])])
        }
        #expect(again == "org.bluez.Error.AlreadyExists")
        let big = try await DBusConnection.connect(address: bus.address)
        try Self.exportApplication(big, calls: Calls(), bigAdvertisement: true)
        let tooBig = await client.errorName {
            _ = try await big.call(
                destination: "org.bluez", path: ObjectPath("/org/bluez/hci1"),
                interface: "org.bluez.LEAdvertisingManager1", member: "RegisterAdvertisement",
                arguments: [.objectPath(ObjectPath("/test/adv")), .dictionary(key: .string, value: .variant, [])])
        }
        #expect(tooBig == "org.bluez.Error.Failed")
        #expect(
            try await client.property("/org/bluez/hci0", "org.bluez.LEAdvertisingManager1", "ActiveInstances")
                == .byte(1))
        try await client.setProperty("/org/bluez/hci0", "org.bluez.Adapter1", "Powered", .boolean(false))
        #expect(
            await client.log.wait(until: { BlueZClient.changed($0, "/org/bluez/hci0", "ActiveInstances", .byte(0)) }))
        await calls.wait(for: "Release")
        _ = (sim, app, big)
    }

    @Test(
        "applications without a valid service are Failed \"No valid service object found\"; SupportedInstances counts the free instance; SupportedIncludes as bluetoothd"
    )
    func validationAndInstances() async throws {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(address: bus.address, scenario: nil, options: ["--adapters", "1"])
        let client = try await BlueZClient.connect(bus)
        let manager = "org.bluez.LEAdvertisingManager1"
        #expect(try await client.property("/org/bluez/hci0", manager, "SupportedInstances") == .byte(1))
        #expect(
            try await client.property("/org/bluez/hci0", manager, "SupportedIncludes")
                == .array(.string, ["tx-power", "appearance", "local-name"].map(DBusValue.string)))
        let bad = try await DBusConnection.connect(address: bus.address)
        let objects = bad.objects
        objects.addObjectManager(at: try ObjectPath("/bad/app"))
        objects.addObjectManager(at: try ObjectPath("/empty/app"))
        try objects.export(
            ObjectPath("/bad/app/service0"),
            interfaces: [
                try ExportedInterface(
                    "org.bluez.GattService1", methods: [],
                    properties: [
                        ExportedProperty("UUID", type: .string, value: .string("not-a-uuid")),
                        ExportedProperty("Primary", type: .boolean, value: .boolean(true)),
                    ])
            ])
        for root in ["/bad/app", "/empty/app"] {
            do {
                _ = try await bad.call(
                    destination: "org.bluez", path: ObjectPath("/org/bluez/hci0"), interface: "org.bluez.GattManager1",
                    member: "RegisterApplication",
                    arguments: [.objectPath(ObjectPath(root)), .dictionary(key: .string, value: .variant, [])])
                Issue.record("\(root) was registered")
            } catch let error as DBusError {
                #expect(error.name.rawValue == "org.bluez.Error.Failed", "\(root)")
                #expect(error.message == "No valid service object found", "\(root)")
            }
        }
        let app = try await DBusConnection.connect(address: bus.address)
        try Self.exportApplication(app, calls: Calls())
        try await Self.register(app)
        #expect(try await client.property("/org/bluez/hci0", manager, "SupportedInstances") == .byte(0))
        #expect(try await client.property("/org/bluez/hci0", manager, "ActiveInstances") == .byte(1))
        _ = (sim, bad, app)
    }

    @Test(
        "an advertisement's SolicitUUIDs and Data count in the advertising data: too long, a type bluetoothd builds itself or a bad UUID is Failed; a fitting one registers"
    )
    func solicitAndData() async throws {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(address: bus.address, scenario: nil, options: ["--adapters", "4"])
        let client = try await BlueZClient.connect(bus)
        let app = try await DBusConnection.connect(address: bus.address)
        func export(_ path: String, solicit: [String], data: [(UInt8, [UInt8])], manufacturer: [UInt8]) throws {
            try app.objects.export(
                ObjectPath(path),
                interfaces: [
                    try ExportedInterface(
                        "org.bluez.LEAdvertisement1", methods: [ExportedMethod("Release", in: "", out: "") { _ in [] }],
                        properties: [
                            ExportedProperty("Type", type: .string, value: .string("peripheral")),
                            ExportedProperty(
                                "SolicitUUIDs", type: .array(.string),
                                value: .array(.string, solicit.map(DBusValue.string))),
                            ExportedProperty(
                                "Data", type: .dictionary(key: .byte, value: .variant),
                                value: .dictionary(
                                    key: .byte, value: .variant, data.map { (.byte($0.0), .variant(.bytes($0.1))) })),
                            ExportedProperty(
                                "ManufacturerData", type: .dictionary(key: .uint16, value: .variant),
                                value: .dictionary(
                                    key: .uint16, value: .variant, [(.uint16(0xFFFF), .variant(.bytes(manufacturer)))])),
                        ])
                ])
        }
        // Each on an adapter of its own: one adapter's single instance would hide a wrong success.
        func register(_ path: String, on adapter: String) async -> String? {
            await client.errorName {
                _ = try await app.call(
                    destination: "org.bluez", path: ObjectPath(adapter),
                    interface: "org.bluez.LEAdvertisingManager1", member: "RegisterAdvertisement",
                    arguments: [.objectPath(ObjectPath(path)), .dictionary(key: .string, value: .variant, [])])
            }
        }
        // Flags (3) + manufacturer data (2 + 2 + 27 = 31) fit 31 + 31; a 29-byte URI AD (0x24) more does not.
        try export(
            "/ad/long", solicit: [], data: [(0x24, [UInt8](repeating: 1, count: 27))],
            manufacturer: [UInt8](repeating: 2, count: 27))
        try export("/ad/name", solicit: [], data: [(0x09, Array("name".utf8))], manufacturer: [1])
        try export("/ad/uuid", solicit: ["not-a-uuid"], data: [], manufacturer: [1])
        try export(
            "/ad/fits", solicit: ["180D", "180F"], data: [(0x24, [1, 2, 3])],
            manufacturer: [UInt8](repeating: 2, count: 27))
        #expect(await register("/ad/long", on: "/org/bluez/hci0") == "org.bluez.Error.Failed")
        #expect(await register("/ad/name", on: "/org/bluez/hci1") == "org.bluez.Error.Failed")
        #expect(await register("/ad/uuid", on: "/org/bluez/hci2") == "org.bluez.Error.Failed")
        #expect(await register("/ad/fits", on: "/org/bluez/hci3") == nil)
        #expect(
            try await client.property("/org/bluez/hci3", "org.bluez.LEAdvertisingManager1", "ActiveInstances")
                == .byte(1))
        #expect(
            try await client.property("/org/bluez/hci0", "org.bluez.LEAdvertisingManager1", "ActiveInstances")
                == .byte(0))
        _ = (sim, app)
    }

    @Test(
        "a remote read passes device, mtu and link \"LE\" (offset only when non-zero); an application error maps through ATT; StartNotify and Value changes notify"
    )
    func optionsAndNotifications() async throws {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(address: bus.address, scenario: nil, options: ["--adapters", "2"])
        let calls = Calls()
        let app = try await DBusConnection.connect(address: bus.address)
        try Self.exportApplication(app, calls: calls)
        try await Self.register(app)
        let client = try await BlueZClient.connect(bus)
        guard case .string(let hci0)? = try await client.property("/org/bluez/hci0", "org.bluez.Adapter1", "Address"),
            case .string(let hci1)? = try await client.property("/org/bluez/hci1", "org.bluez.Adapter1", "Address")
        else { throw HarnessError("adapters without addresses") }
        let peripheral = "/org/bluez/hci1/dev_" + hci0.replacingOccurrences(of: ":", with: "_")
        try await client.adapter("StartDiscovery", path: "/org/bluez/hci1")
        #expect(await client.log.wait(until: { Signals.addedDevices($0)[peripheral] != nil }))
        _ = try await client.call(peripheral, "org.bluez.Device1", "Connect")
        #expect(
            await client.log.wait(until: { BlueZClient.changed($0, peripheral, "ServicesResolved", .boolean(true)) }))
        let objects = try await client.managedObjects()
        guard
            let chrc = objects.first(where: {
                $0.key.hasPrefix(peripheral + "/")
                    && $0.value[BlueZClient.characteristic]?["UUID"] == .string("00002a19-0000-1000-8000-00805f9b34fb")
            })?.key
        else { throw HarnessError("no Battery Level under \(peripheral)") }

        #expect(try await client.read(chrc) == [0x42, 0x43])
        let options = calls.all.first { $0.0 == "ReadValue" }?.1 ?? [:]
        let central = "/org/bluez/hci0/dev_" + hci1.replacingOccurrences(of: ":", with: "_")
        #expect(options["device"] == .objectPath(try ObjectPath(central)))
        #expect(options["link"] == .string("LE"))
        #expect(options["mtu"] != nil)
        #expect(options["offset"] == nil)
        _ = try await client.read(chrc, offset: 1)
        #expect(calls.all.last { $0.0 == "ReadValue" }?.1["offset"] == .uint16(1))

        // NotAuthorized -> ATT Insufficient Authorization -> NotAuthorized at the remote client.
        let refused = await client.errorName { try await client.write(chrc, [1]) }
        #expect(refused == "org.bluez.Error.NotAuthorized")

        _ = try await client.call(chrc, BlueZClient.characteristic, "StartNotify")
        await calls.wait(for: "StartNotify")
        try app.objects.setProperty(
            "Value", to: .bytes([0x55]), interface: "org.bluez.GattCharacteristic1", at: ObjectPath(Self.chrcPath))
        #expect(await client.log.wait(until: { BlueZClient.values($0, chrc).contains([0x55]) }))
        _ = try await client.call(chrc, BlueZClient.characteristic, "StopNotify")
        _ = sim
    }
}
