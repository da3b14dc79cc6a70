import GATT

/// The stable identity of a remote (or, for the peripheral role, a connected
/// central) device, like `CBPeripheral.identifier`.
///
/// It is a name-based (RFC 9562 version 5, SHA-1) UUID of the text
/// `"<adapter address>/<device address>/<address type>"` in the namespace
/// ``namespace``, all addresses upper case, address type `public` or `random`.
/// The same adapter, device address and address type give the same identifier
/// on every run and every machine, with no stored state, so identifiers read
/// back from the restoration store still name the same device after a
/// restart. A device using a resolvable private address is named by the
/// identity address BlueZ reports once bonded (Device1.Address).
public struct PeripheralIdentifier: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The UUID's 128 bits, held inline (an identifier keys every device table, so it allocates nothing).
    let uuid: BluetoothUUID

    /// The UUID's 128 bits, most significant first.
    public var bytes: [UInt8] { uuid.bigEndianBytes }

    /// The namespace UUID of bleagent peripheral identifiers,
    /// `8c1f3a52-6d0e-4b7a-9f43-2e5b0c6a9d17`.
    public static let namespace: [UInt8] = [
        0x8C, 0x1F, 0x3A, 0x52, 0x6D, 0x0E, 0x4B, 0x7A, 0x9F, 0x43, 0x2E, 0x5B, 0x0C, 0x6A, 0x9D, 0x17,
    ]

    /// The identifier of the device at `address` (`AA:BB:CC:DD:EE:FF`, any case)
    /// of `addressType` seen through the adapter whose address is `adapter`.
    public init(adapter: String, address: String, addressType: AddressType) {
        let name = "\(adapter.uppercased())/\(address.uppercased())/\(addressType.rawValue)"
        self.init(nameBasedIn: Self.namespace, name: Array(name.utf8))
    }

    /// The version 5 UUID of `name` in the namespace `namespace` (16 bytes).
    public init(nameBasedIn namespace: [UInt8], name: [UInt8]) {
        var digest = Array(SHA1.digest(namespace + name).prefix(16))
        digest[6] = (digest[6] & 0x0F) | 0x50
        digest[8] = (digest[8] & 0x3F) | 0x80
        self.uuid = .fromBytes(digest)
    }

    /// Parses the 36-character text form (any case).
    public init?(_ text: String) {
        guard let uuid = BluetoothUUID(text), text.count == 36 else { return nil }
        self.uuid = uuid
    }

    /// The lowercase 36-character text form.
    public var uuidString: String { uuid.uuidString }

    /// The text form.
    public var description: String { uuidString }

    /// Orders by the bytes (most significant first).
    public static func < (lhs: PeripheralIdentifier, rhs: PeripheralIdentifier) -> Bool {
        lhs.uuid < rhs.uuid
    }
}

/// A Bluetooth LE address type (BlueZ Device1.AddressType).
public enum AddressType: String, Hashable, Sendable {
    /// A public (IEEE-assigned) address.
    case `public`
    /// A random (static or private) address.
    case random
}

extension BluetoothUUID {
    fileprivate static func fromBytes(_ bytes: [UInt8]) -> BluetoothUUID {
        var high: UInt64 = 0
        var low: UInt64 = 0
        for byte in bytes.prefix(8) { high = high << 8 | UInt64(byte) }
        for byte in bytes.dropFirst(8).prefix(8) { low = low << 8 | UInt64(byte) }
        return BluetoothUUID(high: high, low: low)
    }
}
