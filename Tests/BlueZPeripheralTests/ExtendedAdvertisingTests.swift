import BLE
import BLETesting
import BlueZ
import DBus
import GATT
import Testing

/// PeripheralManager over BlueZPeripheralBackend against blesim: legacy
/// adapters (blesim's default) and extended ones (`--extended-advertising`,
/// LEAdvertisingManager1.SupportedSecondaryChannels as bluetoothd 5.66 serves
/// it for an extended-advertising controller).
@Suite("extended advertising detection against blesim", .serialized, .timeLimit(.minutes(1)))
struct ExtendedAdvertisingTests {
    /// 3 (Flags) + 2 + 40 (name) + 4 (16-bit UUID list) = 49 bytes: over the legacy 31.
    let long = AdvertisingData(serviceUUIDs: [.battery], localName: String(repeating: "x", count: 40))
    let short = AdvertisingData(serviceUUIDs: [.battery], localName: "gw")

    func withManager(
        blesimOptions: [String], _ body: (PeripheralManager, BlueZPeripheralBackend) async throws -> Void
    ) async throws {
        try await PrivateBus.with { bus in
            let sim = try await BlesimProcess.start(address: bus.address, options: blesimOptions)
            defer { sim.stop() }
            let connection = try await bus.connect()
            let backend = try await BlueZPeripheralBackend.start(connection: connection)
            let manager = PeripheralManager(backend: backend, options: .init(adapter: "hci0"))
            for await state in manager.stateUpdates() where state == .poweredOn { break }
            try await body(manager, backend)
            await backend.shutdown()
            await connection.close()
        }
    }

    @Test("a legacy adapter: no secondary channels; long data is refused before BlueZ is asked, short data advertises")
    func legacyAdapter() async throws {
        try await withManager(blesimOptions: []) { manager, backend in
            #expect(try await backend.advertisingCapabilities(adapter: "/org/bluez/hci0") == .legacy)
            do throws(BLEError) {
                try await manager.startAdvertising(long)
                Issue.record("49 bytes advertised on a legacy adapter")
            } catch {
                #expect(error.code == .invalidLength, "\(error)")
                #expect(error.bluezError == nil, "refused by the manager, not by BlueZ: \(error)")
            }
            #expect(!manager.isAdvertising)
            try await manager.startAdvertising(short)
            #expect(manager.isAdvertising)
            try await manager.stopAdvertising()
            // blesim refuses extended PDUs on a legacy controller, as bluetoothd's parse_secondary does.
            do throws(BLEError) {
                try await backend.registerAdvertisement(adapter: "/org/bluez/hci0", short, extended: true)
                Issue.record("SecondaryChannel accepted by a legacy controller")
            } catch {
                #expect(error.bluezError?.name.rawValue == "org.bluez.Error.Failed", "\(error)")
            }
        }
    }

    @Test(
        "an extended adapter: SupportedSecondaryChannels seen; long data goes out with SecondaryChannel, short data stays legacy"
    )
    func extendedAdapter() async throws {
        try await withManager(blesimOptions: ["--extended-advertising"]) { manager, backend in
            #expect(
                try await backend.advertisingCapabilities(adapter: "/org/bluez/hci0")
                    == AdvertisingCapabilities(extendedAdvertising: true, maximumDataLength: 251))
            try await manager.startAdvertising(long)
            #expect(manager.isAdvertising)
            try await manager.stopAdvertising()
            try await manager.startAdvertising(short)
            try await manager.stopAdvertising()
            // blesim checks the length too: long data in legacy PDUs is refused even here.
            do throws(BLEError) {
                try await backend.registerAdvertisement(adapter: "/org/bluez/hci0", long, extended: false)
                Issue.record("49 bytes accepted in legacy PDUs")
            } catch {
                #expect(error.bluezError?.name.rawValue == "org.bluez.Error.Failed", "\(error)")
            }
        }
    }

    @Test("with --experimental blesim also serves SupportedCapabilities (MaxAdvLen), as bluetoothd -E")
    func experimentalCapabilities() async throws {
        try await PrivateBus.with { bus in
            let sim = try await BlesimProcess.start(
                address: bus.address, options: ["--extended-advertising", "--experimental"])
            defer { sim.stop() }
            let connection = try await bus.connect()
            let reply = try await connection.call(
                destination: "org.bluez", path: try ObjectPath("/org/bluez/hci0"),
                interface: "org.freedesktop.DBus.Properties", member: "GetAll",
                arguments: [.string("org.bluez.LEAdvertisingManager1")])
            let properties = try reply.arguments().first
            #expect(properties?["SupportedCapabilities"]?["MaxAdvLen"]?.integerValue == 251)
            #expect(
                BlueZPeripheralBackend.advertisingCapabilities(from: properties)
                    == AdvertisingCapabilities(extendedAdvertising: true, maximumDataLength: 251))
            await connection.close()
        }
    }
}
