import GATT

/// The services bluetoothd 5.66 serves itself on an adapter besides the registered applications
/// (src/gatt-database.c, `register_core_services`), as a central sees them (recorded in the VM:
/// Tests/VM/fixtures/gatt-database-example-gatt-server.txt):
/// - GAP (0x1800) at 0x0001-0x0007: Device Name, Appearance, Central Address Resolution. BlueZ's
///   client hides it from D-Bus, so blesim leaves its handles empty (only its UUID shows, in the
///   central's Device1.UUIDs).
/// - GATT (0x1801) at 0x0008-0x0011 (10 handles asked): Service Changed (indicate) with its CCC,
///   Client Supported Features (read, write), Database Hash (read), Server Supported Features
///   (read: 0x01, EATT, since bluetoothd listens on the EATT PSM).
/// - Device Information (0x180A) at 0x0012-0x0014: PnP ID from main.c's default DeviceID.
/// The applications' services follow from 0x0015.
public enum BluetoothdCoreServices {
    /// GAP's UUID (the central lists it in Device1.UUIDs; no D-Bus object).
    public static let gapUUID = BluetoothUUID(uuid16: 0x1800)
    /// The first handle after GAP: the GATT service's declaration.
    public static let firstHandle: UInt16 = 0x0008

    /// The PnP ID value: main.c's default DeviceID (source 0x0002 USB, vendor 0x1d6b Linux
    /// Foundation, product 0x0246 BlueZ, version 0x0542 for 5.66), little-endian fields.
    public static let pnpID: [UInt8] = [0x02, 0x6b, 0x1d, 0x46, 0x02, 0x42, 0x05]

    /// Client Supported Features as a BlueZ 5.66 central leaves it once its services are
    /// resolved: it writes robust caching, EATT and multiple-handle notifications (0x07).
    public static let clientSupportedFeatures: [UInt8] = [0x07]

    /// Database Hash: not computed (AES-CMAC over the database, Core spec Vol 3 Part G 7.3);
    /// sixteen zero bytes stand in for it.
    public static let databaseHash = [UInt8](repeating: 0, count: 16)

    /// GATT and Device Information, in bluetoothd's order, as services of a database.
    public static let services: [GATTServiceSpec] = {
        func chrc(_ uuid: UInt16, _ flags: [String], _ value: [UInt8] = []) -> GATTCharacteristicSpec {
            GATTCharacteristicSpec(
                uuid: BluetoothUUID(uuid16: uuid), flags: BlueZGATTFlags.Characteristic(bluezFlags: flags),
                value: value)
        }
        var gatt = GATTServiceSpec(
            uuid: BluetoothUUID(uuid16: 0x1801),
            characteristics: [
                chrc(0x2A05, ["indicate"]),
                chrc(0x2B29, ["read", "write"], clientSupportedFeatures),
                chrc(0x2B2A, ["read"], databaseHash),
                chrc(0x2B3A, ["read"], [0x01]),
            ])
        gatt.reservedHandles = 10
        let deviceInformation = GATTServiceSpec(
            uuid: BluetoothUUID(uuid16: 0x180A), characteristics: [chrc(0x2A50, ["read"], pnpID)])
        return [gatt, deviceInformation]
    }()
}
