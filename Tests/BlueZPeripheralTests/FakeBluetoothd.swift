import BLETesting
import DBus
import Synchronization

/// A stand-in for bluetoothd on a private bus: owns `org.bluez`, exports
/// `/org/bluez/hci0` (Adapter1 powered, GattManager1, LEAdvertisingManager1)
/// and one Device1, and behaves like bluetoothd 5.66 where it matters here:
/// RegisterApplication reads the application's GetManagedObjects *before* it
/// replies, RegisterAdvertisement reads the advertisement's properties first.
final class FakeBluetoothd: Sendable {
    enum Event: Sendable {
        case applicationRegistered(root: ObjectPath, objects: DBusValue)
        case applicationUnregistered(ObjectPath)
        case advertisementRegistered(path: ObjectPath, properties: DBusValue)
        case advertisementUnregistered(ObjectPath)
        case deviceDisconnected(ObjectPath)
    }

    static let adapter = path("/org/bluez/hci0")
    static let device = path("/org/bluez/hci0/dev_11_22_33_44_55_66")
    static let adapterAddress = "AA:BB:CC:DD:EE:01"

    let connection: DBusConnection
    let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation
    /// The senders of the calls to `/` made before ``exportObjects()`` (a fake started without its objects).
    let rootCalls = Recorder<String>()
    /// The application's sender, for calls back into it.
    let application = Mutex<(sender: String, root: ObjectPath)?>(nil)

    private init(connection: DBusConnection) {
        self.connection = connection
        (events, continuation) = AsyncStream.makeStream(of: Event.self)
    }

    /// Connects, exports the objects unless `exporting` is false (``exportObjects()`` later), and takes
    /// `org.bluez` as bluetoothd does: with DO_NOT_QUEUE, so it fails while another daemon has the name.
    static func start(on bus: PrivateBus, exporting: Bool = true) async throws -> FakeBluetoothd {
        let fake = FakeBluetoothd(connection: try await bus.connect())
        if exporting {
            try fake.exportObjects()
        } else {
            // Only the root, with no interface: a GetManagedObjects fails (and is recorded) until exportObjects().
            let asked = fake.rootCalls
            try fake.connection.objects.export(.root, interfaces: []) { sender in
                asked.append(sender)
                return true
            }
        }
        let reply = try await fake.connection.requestName("org.bluez")
        guard reply == .primaryOwner else { throw DBusError(.failed, "org.bluez: RequestName answered \(reply)") }
        return fake
    }

    /// Exports the adapter (with its managers) and the device, and the object manager at the root.
    func exportObjects() throws {
        let objects = connection.objects
        objects.addObjectManager(at: .root)
        let continuation = self.continuation
        let gatt = try ExportedInterface(
            "org.bluez.GattManager1",
            methods: [
                ExportedMethod("RegisterApplication", in: "oa{sv}", out: "") { [weak self] call in
                    let root = try call.arguments()[0].decode(ObjectPath.self)
                    let reply = try await call.connection.call(
                        destination: call.sender, path: root, interface: "org.freedesktop.DBus.ObjectManager",
                        member: "GetManagedObjects")
                    self?.application.withLock { $0 = (call.sender, root) }
                    continuation.yield(.applicationRegistered(root: root, objects: try reply.arguments()[0]))
                    return []
                },
                ExportedMethod("UnregisterApplication", in: "o", out: "") { call in
                    continuation.yield(.applicationUnregistered(try call.arguments()[0].decode(ObjectPath.self)))
                    return []
                },
            ])
        let advertising = try ExportedInterface(
            "org.bluez.LEAdvertisingManager1",
            methods: [
                ExportedMethod("RegisterAdvertisement", in: "oa{sv}", out: "") { call in
                    let path = try call.arguments()[0].decode(ObjectPath.self)
                    let reply = try await call.connection.call(
                        destination: call.sender, path: path, interface: "org.freedesktop.DBus.Properties",
                        member: "GetAll", arguments: [.string("org.bluez.LEAdvertisement1")])
                    continuation.yield(.advertisementRegistered(path: path, properties: try reply.arguments()[0]))
                    return []
                },
                ExportedMethod("UnregisterAdvertisement", in: "o", out: "") { call in
                    continuation.yield(.advertisementUnregistered(try call.arguments()[0].decode(ObjectPath.self)))
                    return []
                },
            ],
            properties: [
                ExportedProperty("ActiveInstances", type: .byte, value: .byte(0)),
                ExportedProperty("SupportedInstances", type: .byte, value: .byte(5)),
            ])
        let adapter = try ExportedInterface(
            "org.bluez.Adapter1",
            properties: [
                ExportedProperty("Address", type: .string, value: .string(Self.adapterAddress)),
                ExportedProperty("Powered", type: .boolean, value: .boolean(true)),
            ])
        try objects.export(Self.adapter, interfaces: [adapter, gatt, advertising])
        let device = try ExportedInterface(
            "org.bluez.Device1",
            methods: [
                ExportedMethod("Disconnect", in: "", out: "") { _ in
                    continuation.yield(.deviceDisconnected(Self.device))
                    return []
                }
            ],
            properties: [
                ExportedProperty("Address", type: .string, value: .string("11:22:33:44:55:66")),
                ExportedProperty("AddressType", type: .string, value: .string("random")),
            ])
        try objects.export(Self.device, interfaces: [device])
    }

    /// Calls a method of the registered application as bluetoothd would.
    func callApplication(
        _ path: ObjectPath, _ member: String, _ arguments: [DBusValue] = [],
        interface: String = "org.bluez.GattCharacteristic1"
    ) async throws -> DBusMessage {
        let sender = application.withLock { $0?.sender } ?? ""
        return try await connection.call(
            destination: sender, path: path, interface: interface, member: member, arguments: arguments)
    }
}

/// A path from a literal known to be valid (the root otherwise, which no test expects).
func path(_ text: String) -> ObjectPath { (try? ObjectPath(text)) ?? .root }
