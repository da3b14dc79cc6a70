import BLE
import BLETesting
import DBus
import Synchronization

/// A minimal `org.bluez` on a private bus for the backend's host tests: one
/// adapter (`/org/bluez/hci0`, powered) under an object manager at `/`;
/// StartDiscovery exports one heart-rate device with advertisement data.
/// Every Adapter1 call is reported on ``calls``.
final class FakeBlueZ: Sendable {
    static let adapterPath = "/org/bluez/hci0"
    static let devicePath = "/org/bluez/hci0/dev_11_22_33_44_55_66"

    let connection: DBusConnection
    let gatt: FakeGATT
    let calls: AsyncStream<String>
    private let callSink: AsyncStream<String>.Continuation

    private init(connection: DBusConnection, refuseAcquire: Bool, acquireMissing: Bool) {
        self.connection = connection
        self.gatt = FakeGATT(refuseAcquire: refuseAcquire, acquireMissing: acquireMissing)
        (calls, callSink) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// Exports the tree and takes the name `org.bluez`; with `refuseEveryone`
    /// every call is answered AccessDenied (a bus policy that keeps us out); with `acquireMissing`
    /// characteristics have no AcquireNotify/AcquireWrite (libdbus answers UnknownMethod, as a
    /// BlueZ stand-in without them does).
    static func start(
        on bus: PrivateBus, refuseEveryone: Bool = false, refuseAcquire: Bool = false, acquireMissing: Bool = false
    ) async throws -> FakeBlueZ {
        let connection = try await bus.connect()
        let fake = FakeBlueZ(connection: connection, refuseAcquire: refuseAcquire, acquireMissing: acquireMissing)
        let authorize: ObjectServer.Authorizer?
        if refuseEveryone { authorize = { _ in false } } else { authorize = nil }
        connection.objects.addObjectManager(at: .root, authorize: authorize)
        let record = { (name: String) -> ExportedMethod.Handler in fake.handler(name) }
        let adapter = try ExportedInterface(
            BlueZInterface.adapter,
            methods: [
                try ExportedMethod("StartDiscovery", in: "", out: "", handler: record("StartDiscovery")),
                try ExportedMethod("StopDiscovery", in: "", out: "", handler: record("StopDiscovery")),
                try ExportedMethod("SetDiscoveryFilter", in: "a{sv}", out: "", handler: record("SetDiscoveryFilter")),
            ],
            properties: [
                try ExportedProperty("Address", type: .string, value: .string("00:AA:01:00:00:01")),
                try ExportedProperty("Powered", type: .boolean, access: .readWrite, value: .boolean(true)),
                try ExportedProperty("Discovering", type: .boolean, value: .boolean(false)),
            ])
        try fake.connection.objects.export(try ObjectPath(adapterPath), interfaces: [adapter], authorize: authorize)
        _ = try await fake.connection.requestName(BlueZInterface.busName)
        return fake
    }

    private func handler(_ name: String) -> ExportedMethod.Handler {
        let sink = callSink
        return { [weak self] _ in
            sink.yield(name)
            if name == "StartDiscovery" { try self?.exportDevice() }
            return []
        }
    }

    /// Powers the adapter on or off (PropertiesChanged).
    func setPowered(_ powered: Bool) throws {
        try connection.objects.setProperty(
            "Powered", to: .boolean(powered), interface: BlueZInterface.adapter, at: try ObjectPath(Self.adapterPath))
    }

    /// Leaves the bus, as bluetoothd exiting does.
    func stop() async { await connection.close() }

    private func exportDevice() throws {
        let path = try ObjectPath(Self.devicePath)
        guard !connection.objects.paths.contains(path) else { return }
        let device = try ExportedInterface(
            BlueZInterface.device,
            methods: try gatt.deviceMethods { [weak self] in self?.connection.objects },
            properties: [
                try ExportedProperty("Address", type: .string, value: .string("11:22:33:44:55:66")),
                try ExportedProperty("AddressType", type: .string, value: .string("public")),
                try ExportedProperty("Name", type: .string, value: .string("HRM-1")),
                try ExportedProperty("Alias", type: .string, value: .string("HRM-1")),
                try ExportedProperty(
                    "Adapter", type: .objectPath, value: .objectPath(try ObjectPath(Self.adapterPath))),
                try ExportedProperty("RSSI", type: .int16, value: .int16(-52)),
                try ExportedProperty(
                    "UUIDs", type: .array(.string),
                    value: .array(.string, [.string("0000180d-0000-1000-8000-00805f9b34fb")])),
                try ExportedProperty(
                    "ManufacturerData", type: .dictionary(key: .uint16, value: .variant),
                    value: .dictionary(key: .uint16, value: .variant, [(.uint16(0xFFFF), .variant(.bytes([1, 2, 3])))])),
                try ExportedProperty("Connected", type: .boolean, value: .boolean(false)),
                try ExportedProperty("Paired", type: .boolean, value: .boolean(false)),
                try ExportedProperty("ServicesResolved", type: .boolean, value: .boolean(false)),
            ])
        try connection.objects.export(path, interfaces: [device])
    }
}
